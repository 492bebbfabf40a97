/**
 * The identities a bulk load has appended, while the inbox has no identity index: an
 * open-addressing table of each identity's first 32 bits and the inbox id of its row, 8 bytes a
 * slot and at most 80 % full; a fraction of what a Set of 64-character strings takes. Exact all
 * the same: identities that share the 32 bits are told apart by reading the earlier row's
 * identity (`identityAt`), which is also how a repeat is confirmed.
 */
export class IdentitySet {
  private prefixes = new Uint32Array(1 << 16);
  // Inbox ids start at 1: 0 marks an empty slot.
  private ids = new Uint32Array(1 << 16);
  private count = 0;

  constructor(private readonly identityAt: (inboxId: number) => string | undefined) {}

  /** The inbox id of the row appended earlier with this identity, if any. */
  find(identity: string): number | undefined {
    const prefix = prefixOf(identity);
    const mask = this.ids.length - 1;
    for (let slot = prefix & mask; ; slot = (slot + 1) & mask) {
      const id = this.ids[slot]!;
      if (id === 0) return undefined;
      if (this.prefixes[slot] === prefix && this.identityAt(id) === identity) return id;
    }
  }

  /** Records an identity appended as `inboxId` (the caller checked `find` first). */
  add(identity: string, inboxId: number): void {
    if (!(inboxId >= 1 && inboxId <= 0xffffffff)) throw new RangeError(`inbox id ${inboxId} out of the bulk load's range`);
    if ((this.count + 1) * 5 > this.ids.length * 4) this.grow();
    place(this.prefixes, this.ids, prefixOf(identity), inboxId);
    this.count++;
  }

  private grow(): void {
    const prefixes = new Uint32Array(this.ids.length * 2);
    const ids = new Uint32Array(prefixes.length);
    for (let slot = 0; slot < this.ids.length; slot++) {
      if (this.ids[slot] !== 0) place(prefixes, ids, this.prefixes[slot]!, this.ids[slot]!);
    }
    this.prefixes = prefixes;
    this.ids = ids;
  }
}

function prefixOf(identity: string): number {
  const prefix = parseInt(identity.slice(0, 8), 16);
  if (!(prefix >= 0) || identity.length !== 64) throw new TypeError(`not an identity: ${identity.slice(0, 12)}…`);
  return prefix >>> 0;
}

function place(prefixes: Uint32Array, ids: Uint32Array, prefix: number, inboxId: number): void {
  const mask = ids.length - 1;
  let slot = prefix & mask;
  while (ids[slot] !== 0) slot = (slot + 1) & mask;
  prefixes[slot] = prefix;
  ids[slot] = inboxId;
}
