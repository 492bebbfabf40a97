// A store as the public API knows it: a handle to open, hand on and close. Its ports are internal
// (store.ts, whose `storePorts` turns a handle back into them), so that they can change with the
// pipeline without breaking users.

/**
 * An open store: what `openStore` returns, and what `createReceiver`, `createQueries`, `replay`,
 * `rebuild`, `eraseCandidate` and the other functions of the API take. Only this package makes
 * one; its operations are internal.
 * @public
 */
export interface StoreHandle {
  /** Where the data lives, without credentials, for logs: `sqlite:./data/x.db`, `postgres://host:5432/db`. */
  readonly location: string;
  /** The account this handle reaches (`openStore` opens the default account's). */
  readonly account: string;
  /** The same store (connection, lifecycle) scoped to another account; cheap, cached. Close only the one `openStore` returned. */
  forAccount(account: string): StoreHandle;
  /** Closes the connection (or pool made from a URL); the handle and its other accounts' views are unusable after. */
  close(): Promise<void>;
}
