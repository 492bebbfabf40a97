import { readEnvelope, type EventKind } from '../events/index.js';
import { projectable, projectBatch, type Processed } from '../project/batch.js';
import { outcomeOf, processedWith, type Outcome } from '../project/settlement.js';
import { projectStaged, stagedEffectsOf } from '../project/bulk.js';
import { deliveryOf, identityKeyOf, type Delivery } from '../receive/delivery.js';
import type { IdentityKey, SettledDelivery } from '../store/rows.js';
import type { StagedEffect } from '../tables/stored.js';
import type { Store } from '../store/store.js';
import type { BulkLoad, WriteTx } from '../store/write-ports.js';
import type { StoredBody } from '../store/bodies.js';
import { startBodyDeflater, type BodyDeflater } from '../store/body-deflater.js';
import type { CopiedErasure } from './lines.js';
import { readSources, type ReplayInput, type SourceItem } from './sources.js';

/** What a replay did with its inputs, counted by outcome. */
export interface ReplaySummary {
  /** Events read from the inputs. */
  received: number;
  /** Events already in the database (same identity; for bodies that are not events, same bytes). */
  duplicates: number;
  /** Events stored pending for the receiver running on the database to project (`enqueue`); 0 otherwise. */
  enqueued: number;
  /** Events projected into the state. */
  projected: number;
  /** Kept as events of a kind this version does not know. */
  unknown: number;
  /** Kept as dead letters: invalid data, or not an event envelope. */
  dead: number;
  /** Erasures recorded from a dump's erasure lines (docs/commands.md, "dump"); 0 for those recorded already. */
  erasures: number;
  /** Inputs that could not be read at all (missing file, permission …). */
  unreadable: Array<{ origin: string; message: string }>;
}

/**
 * Inputs that could not be read (a missing file, a folder without permission): the others were
 * replayed, and `summary` says what became of them. A missing fixture is an error, never a quiet count.
 */
export class ReplayInputError extends Error {
  /** Always `ReplayInputError`, to tell it apart from other errors. */
  override name = 'ReplayInputError';
  constructor(
    /** What was replayed, the inputs that could not be read included. */
    readonly summary: ReplaySummary,
  ) {
    super(`could not read ${summary.unreadable.map((u) => `${u.origin} (${u.message})`).join(', ')}`);
  }
}

/** The summary, or ReplayInputError when an input could not be read. */
export function requireReadable(summary: ReplaySummary): ReplaySummary {
  if (summary.unreadable.length > 0) throw new ReplayInputError(summary);
  return summary;
}

/** The ports a replay writes through: transactions, the bulk path where the engine has one, durability, the wake-up, the scrub after an erasure. */
export type ReplayPorts = Pick<Store, 'account' | 'write' | 'bulkLoad' | 'flush' | 'announceWork' | 'scrub'>;

export interface ReplayTarget {
  store: ReplayPorts;
  /** Whether application handlers want events of this kind (they run after the replay commits). */
  wantsHandlers?: (kind: EventKind) => boolean;
  now?: () => number;
}

/** How `replay` (and `receiver.replay`) batches and stores. */
export interface ReplayOptions {
  /** Events per transaction. Default 500 (larger batches hold more memory for little speed). */
  batchSize?: number;
  /** Called after each batch with the running summary (committed with the rest at the end in a bulk load). */
  onProgress?: (summary: ReplaySummary, progress: { bulk: boolean }) => void;
  /**
   * Into an empty database, load in bulk where the engine can (SQLite): one transaction that holds
   * the write lock throughout, rolled back whole if interrupted, and whose cost per event stays
   * flat however large the input. Its last steps (duplicates, indexes, projection) run without
   * yielding to the event loop. Default true; false takes the batched path always.
   */
  bulk?: boolean;
  /**
   * Store the events pending and announce them, without projecting them (nor taking the bulk
   * path): for a database a running receiver owns, which projects them and runs its handlers as
   * for webhooks. Bodies that are not events are kept as dead letters at once. Default false.
   */
  enqueue?: boolean;
}

/**
 * Feeds events through the same path as HTTP (identity, inbox with deduplication, parse,
 * projection, inbox state) without the network: for tests, backfills and the CLI. Each batch is
 * one transaction: its events are folded in memory and each row they touch is written once.
 */
export async function replayInto(
  target: ReplayTarget,
  inputs: Iterable<ReplayInput> | ReplayInput,
  options: ReplayOptions = {},
): Promise<ReplaySummary> {
  const { store } = target;
  const summary: ReplaySummary = {
    received: 0,
    duplicates: 0,
    enqueued: 0,
    projected: 0,
    unknown: 0,
    dead: 0,
    erasures: 0,
    unreadable: [],
  };
  const items = new Items(readSources(inputs));
  try {
    if (options.bulk !== false && !options.enqueue && store.bulkLoad !== undefined) {
      // A dump's erasures come before its events: recorded first, so that the load honours them.
      await copyErasures(store, await leadingErasures(items, summary), summary);
      // Stops before an erasure line that follows events, and the batched path below goes on from it.
      await replayBulk(target, items, options, summary);
    }
    await replayBatched(target, items, options, summary);
  } finally {
    await items.close();
  }
  await store.flush();
  return summary;
}

/** The inputs' items one at a time, one of which can be put back: the bulk load stops before an erasure line. */
class Items {
  private back: SourceItem | undefined;
  constructor(private readonly source: AsyncGenerator<SourceItem>) {}
  async next(): Promise<SourceItem | undefined> {
    const item = this.back;
    if (item !== undefined) {
      this.back = undefined;
      return item;
    }
    const read = await this.source.next();
    return read.done === true ? undefined : read.value;
  }
  putBack(item: SourceItem): void {
    this.back = item;
  }
  async close(): Promise<void> {
    await this.source.return(undefined);
  }
}

/** The erasure lines before the first body (inputs that cannot be read noted on the way). */
async function leadingErasures(items: Items, summary: ReplaySummary): Promise<CopiedErasure[]> {
  const erasures: CopiedErasure[] = [];
  for (let item = await items.next(); item !== undefined; item = await items.next()) {
    if (!item.ok) summary.unreadable.push({ origin: item.origin, message: item.message });
    else if ('erasure' in item) erasures.push(item.erasure);
    else {
      items.putBack(item);
      break;
    }
  }
  return erasures;
}

/** The reason a copied erasure is recorded with: the source's own may name the person, and a dump never carries it. */
const COPIED_REASON = 'copied by replay';

/**
 * A dump's erasures recorded here in one transaction, each as an erasure at its own instant
 * (docs/projection.md section 8): whatever here names the person erased and redacted, their older
 * events changing nothing from then on; one recorded already changes nothing. Then the engine
 * scrubbed, as after an erasure, when they erased anything here.
 */
async function copyErasures(store: ReplayPorts, erasures: readonly CopiedErasure[], summary: ReplaySummary): Promise<void> {
  if (erasures.length === 0) return;
  const done = await store.write(async (tx) => {
    const done = { recorded: 0, redacted: 0 };
    for (const { candidateId, erasedAt } of erasures) {
      const outcome = await tx.eraseCandidate({ match: { candidateId }, erasedAt, reason: COPIED_REASON, copied: true });
      if (!outcome.found) continue;
      done.recorded++;
      done.redacted += outcome.eventsRedacted;
    }
    return done;
  });
  summary.erasures += done.recorded;
  if (done.redacted > 0) await store.scrub();
}

/** What is left of the inputs, batch by batch; an erasure line commits the events before it, then is recorded. */
async function replayBatched(target: ReplayTarget, items: Items, options: ReplayOptions, summary: ReplaySummary): Promise<void> {
  const { store } = target;
  const now = target.now ?? Date.now;
  const batchSize = options.batchSize ?? 500;
  // Batches commit without waiting for the disk; a flush at the end makes them all durable
  // before replay returns.
  let batch: Buffer[] = [];
  let erasures: CopiedErasure[] = [];
  const flush = async () => {
    const at = new Date(now()).toISOString();
    if (options.enqueue) await enqueue(store, batch, at, summary);
    else addCounts(summary, await store.write((tx) => projectInBatch(tx, target, batch, at), { durable: false }));
    batch = [];
    options.onProgress?.({ ...summary }, { bulk: false });
  };
  for (let item = await items.next(); item !== undefined; item = await items.next()) {
    if (!item.ok) {
      summary.unreadable.push({ origin: item.origin, message: item.message });
      continue;
    }
    if ('erasure' in item) {
      if (batch.length > 0) await flush();
      erasures.push(item.erasure);
      continue;
    }
    if (erasures.length > 0) {
      await copyErasures(store, erasures, summary);
      erasures = [];
    }
    if (batch.length >= batchSize) {
      await flush();
      await new Promise((resolve) => setImmediate(resolve));
    }
    summary.received++;
    batch.push(item.raw);
  }
  if (batch.length > 0) await flush();
  await copyErasures(store, erasures, summary);
}

type BatchCounts = { duplicates: number; projected: number; unknown: number; dead: number };
type Entry = { raw: Buffer; reading: ReturnType<typeof readEnvelope> };
type EventEntry = { raw: Buffer; reading: Extract<Entry['reading'], { ok: true }> };

function addCounts(summary: ReplaySummary, counts: BatchCounts): void {
  summary.duplicates += counts.duplicates;
  summary.projected += counts.projected;
  summary.unknown += counts.unknown;
  summary.dead += counts.dead;
}

/**
 * One batch in one transaction: repeats within it and in the inbox counted, the events folded in
 * memory and projected (each row they touch written once), and every new row stored settled.
 */
async function projectInBatch(tx: WriteTx, target: ReplayTarget, raws: readonly Buffer[], at: string): Promise<BatchCounts> {
  const batch: BatchCounts = { duplicates: 0, projected: 0, unknown: 0, dead: 0 };
  // Rows are written in input order (their inbox ids follow it), bodies that are not
  // envelopes included: they are kept as dead letters, like a bad HTTP body.
  const entries: Entry[] = [];
  const seen = new Map<string, IdentityKey>();
  for (const raw of raws) {
    const reading = readEnvelope(raw);
    if (reading.ok && seen.has(reading.identity)) batch.duplicates++;
    else entries.push({ raw, reading });
    if (reading.ok) seen.set(reading.identity, identityKeyOf(reading));
  }
  const known = await tx.known([...seen.values()]);
  batch.duplicates += known.size;
  const fresh = entries.filter((e) => !e.reading.ok || !known.has(e.reading.identity));
  const events = fresh.filter((e): e is EventEntry => e.reading.ok);
  const processed = await projectBatch(tx, events);
  const settled = new Map<Buffer, SettledDelivery>();
  events.forEach(({ raw, reading }, i) => {
    const p = processed[i]!;
    batch[p.state]++;
    settled.set(raw, settledDelivery(target.store.account, raw, reading, at, outcomeOf(p, target.wantsHandlers)));
  });
  await appendInOrder(tx, target.store.account, fresh, settled, at, batch);
  return batch;
}

/** Stores the new rows in input order: events settled, runs of bodies that are not events as dead letters. */
async function appendInOrder(
  tx: WriteTx,
  account: string,
  fresh: readonly Entry[],
  settled: ReadonlyMap<Buffer, SettledDelivery>,
  at: string,
  batch: BatchCounts,
): Promise<void> {
  for (let i = 0; i < fresh.length;) {
    const envelope = fresh[i]!.reading.ok;
    let j = i;
    while (j < fresh.length && fresh[j]!.reading.ok === envelope) j++;
    const run = fresh.slice(i, j);
    if (envelope)
      await tx.appendSettled(
        run.map((e) => settled.get(e.raw)!),
        at,
      );
    else {
      // Kept as dead letters, like bad HTTP bodies; the same bad bytes again are a duplicate.
      for (const appended of await tx.append(run.map((e) => deliveryOf(account, e.raw, e.reading, at, null)))) {
        if (appended.duplicate) batch.duplicates++;
        else batch.dead++;
      }
    }
    i = j;
  }
}

/** An event's new row, stored as it was processed (an erased candidate's event redacted, docs/projection.md section 8). */
function settledDelivery(account: string, raw: Buffer, reading: EventEntry['reading'], at: string, outcome: Outcome): SettledDelivery {
  return {
    delivery: { ...deliveryOf(account, outcome.raw ?? raw, reading, at, null), identity: reading.identity, kind: reading.envelope.event },
    state: outcome.state,
    reasons: outcome.reasons,
    handlers: outcome.handlers,
  };
}

/** What a bulk load stages of a processed event: its effects, or its campaign's trace when it names an erased candidate. */
function effectsOf(p: Processed): StagedEffect[] {
  return p.state === 'projected' ? projectable(p).flatMap(stagedEffectsOf) : [];
}

/**
 * One batch stored pending, in input order, as the intake stores webhooks (`ReplayOptions.enqueue`),
 * then announced to the receivers on the database: they project it and run their handlers.
 */
async function enqueue(store: ReplayPorts, raws: readonly Buffer[], at: string, summary: ReplaySummary): Promise<void> {
  const deliveries = raws.map((raw) => deliveryOf(store.account, raw, readEnvelope(raw), at, null));
  const appended = await store.write((tx) => tx.append(deliveries), { durable: false });
  const before = summary.enqueued;
  appended.forEach((outcome, i) => {
    if (outcome.duplicate) summary.duplicates++;
    else if (deliveries[i]!.verdict === 'accepted') summary.enqueued++;
    else summary.dead++;
  });
  if (summary.enqueued > before) store.announceWork();
}

/**
 * The bulk path (`ReplayOptions.bulk`): every input read, processed and appended in input order
 * (the first of each identity stays, as in the batched path), with the effects of the new events
 * staged; then the staged effects folded into the projected tables. Undefined, having read
 * nothing, when the database is not empty. It stops before an erasure line that follows events.
 */
async function replayBulk(
  target: ReplayTarget,
  items: Items,
  options: ReplayOptions,
  summary: ReplaySummary,
): Promise<ReplaySummary | undefined> {
  const now = target.now ?? Date.now;
  const batchSize = options.batchSize ?? 500;
  return target.store.bulkLoad!('empty', async (bulk) => {
    const batches = new BulkBatches(target, bulk, new Date(now()).toISOString(), summary, options.onProgress);
    try {
      let batch: Buffer[] = [];
      for (let item = await items.next(); item !== undefined; item = await items.next()) {
        if (!item.ok) {
          summary.unreadable.push({ origin: item.origin, message: item.message });
          continue;
        }
        if ('erasure' in item) {
          // An erasure after events: the load ends here, and the batched path records it and goes on.
          items.putBack(item);
          break;
        }
        summary.received++;
        batch.push(item.raw);
        if (batch.length >= batchSize) {
          await batches.load(batch);
          batch = [];
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
      await batches.load(batch);
      await batches.finish();
    } finally {
      await batches.close();
    }
    projectStaged(bulk, batchSize);
    return summary;
  });
}

/** A row of a bulk load, with the effects it stages once appended. */
type LoadRow = ({ settled: SettledDelivery; effects: StagedEffect[] } | { refused: Delivery }) & { body?: StoredBody };

/** Events a bulk load reads before it deflates bodies on a thread: a short replay does not pay for starting one. */
const THREAD_AFTER = 5_000;

/**
 * A bulk load's batches, appended in input order. Past THREAD_AFTER events, each batch's bodies
 * are deflated on a thread (store/body-deflater.ts) while this thread processes and appends the
 * batch before it; one batch at most waits for its bodies, so memory stays bounded however long
 * the input. What waits is the batch's bytes only: a batch is processed just before it is appended,
 * so that its rows die young instead of living through the next batch's reading.
 */
class BulkBatches {
  private readonly erased: Map<string, number>;
  private deflater: BodyDeflater | 'none' | 'unavailable' = 'none';
  private waiting: { raws: readonly Buffer[]; bodies: Promise<StoredBody[]> } | undefined;
  private read = 0;

  constructor(
    private readonly target: ReplayTarget,
    private readonly bulk: BulkLoad,
    private readonly at: string,
    private readonly summary: ReplaySummary,
    private readonly onProgress: ReplayOptions['onProgress'],
  ) {
    // Erasures outlive the rows they redacted: an inbox emptied by hand may still have some.
    this.erased = bulk.erasures();
  }

  /** Processes and appends `raws`, or hands their bodies to the thread and appends the batch before. */
  async load(raws: readonly Buffer[]): Promise<void> {
    if (raws.length === 0) return;
    this.read += raws.length;
    const bodies = this.started()?.deflate(raws);
    // Awaited in turn by the next load or by finish; until then a failure is not unhandled.
    bodies?.catch(() => undefined);
    await this.finish();
    if (bodies === undefined) this.append(raws.map((raw) => this.row(raw)));
    else this.waiting = { raws, bodies };
  }

  /** Processes and appends the batch waiting for its bodies, if any: a body the thread did not deflate fails the load. */
  async finish(): Promise<void> {
    const waiting = this.waiting;
    if (waiting === undefined) return;
    this.waiting = undefined;
    const rows = waiting.raws.map((raw) => this.row(raw));
    const bodies = await waiting.bodies;
    // A row whose body was redacted as processed (an erased candidate's) is not the body deflated: the store deflates it.
    rows.forEach((row, i) => {
      if (('refused' in row ? row.refused.raw : row.settled.delivery.raw) === waiting.raws[i]) row.body = bodies[i];
    });
    this.append(rows);
  }

  async close(): Promise<void> {
    if (typeof this.deflater === 'object') await this.deflater.close();
  }

  /** The thread, started once past THREAD_AFTER events; undefined before, or where it cannot run. */
  private started(): BodyDeflater | undefined {
    if (this.deflater === 'none' && this.read > THREAD_AFTER) this.deflater = startBodyDeflater() ?? 'unavailable';
    return typeof this.deflater === 'object' ? this.deflater : undefined;
  }

  private row(raw: Buffer): LoadRow {
    const { target, at } = this;
    const reading = readEnvelope(raw);
    if (!reading.ok) return { refused: deliveryOf(target.store.account, raw, reading, at, null) };
    const p = processedWith(raw, reading, this.erased);
    return {
      settled: settledDelivery(target.store.account, raw, reading, at, outcomeOf(p, target.wantsHandlers)),
      effects: effectsOf(p),
    };
  }

  private append(rows: readonly LoadRow[]): void {
    const { summary } = this;
    const appended = this.bulk.append(rows, this.at);
    const fresh: StagedEffect[] = [];
    rows.forEach((row, i) => {
      if (!appended[i]) summary.duplicates++;
      else if ('refused' in row) summary.dead++;
      else {
        summary[row.settled.state]++;
        for (const effect of row.effects) fresh.push(effect);
      }
    });
    this.bulk.stage(fresh);
    this.onProgress?.({ ...summary }, { bulk: true });
  }
}
