// The one connection a broker destination keeps (a Redis stream's writer, a NATS subject's
// publisher): opened at its first need, kept while what it was opened for stays the same (the
// URL, the stream or subject, the client certificate), opened again at the next attempt once it
// could not be opened or was lost, and closed (or dropped at once) when the destination stops.
/** What a kept connection can be asked to end. */
export interface Closable {
  close(): Promise<void>;
  /** Drops it at once: what is in flight fails now. */
  destroy(): void;
}

/** A connection being opened for `key`, and what its user keeps beside it until it is dropped. */
interface Held<T, S> {
  key: string;
  opening: Promise<T>;
  state: S;
}

export interface KeptConnection<T extends Closable, S> {
  /** The connection for `key`: the one held, or a new one from `open` (the one held closed first). */
  of(key: string, open: () => Promise<T>): Held<T, S>;
  /** Forgets the one held without closing it (it was found closed): the next `of` opens anew. */
  drop(): void;
  /** Closes the one held once it is open. */
  close(): Promise<void>;
  /** Drops the one held at once. */
  halt(): void;
}

/** A kept connection; `fresh` gives the state beside a new one. */
export function keptConnection<T extends Closable, S>(fresh: () => S): KeptConnection<T, S> {
  let held: Held<T, S> | undefined;
  const take = () => {
    const taken = held;
    held = undefined;
    return taken;
  };
  const close = async () => {
    const closing = take();
    if (closing !== undefined) await closing.opening.then((c) => c.close()).catch(() => undefined);
  };
  return {
    of(key, open) {
      if (held?.key !== key) {
        void close();
        const opening = open();
        const made: Held<T, S> = { key, opening, state: fresh() };
        held = made;
        // A connection that could not be made is made again at the next attempt.
        opening.catch(() => {
          if (held === made) held = undefined;
        });
      }
      return held;
    },
    drop: () => void take(),
    close,
    halt: () =>
      void take()
        ?.opening.then((c) => c.destroy())
        .catch(() => undefined),
  };
}
