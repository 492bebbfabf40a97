// An inbox row's state, in a file of its own so that the ports (store/ports/) and store.ts can
// both name it without importing each other.
/** An inbox row's state: `pending` until projected; `unknown` (a kind this version does not know) and `dead` (invalid) are set aside. */
export type InboxState = 'pending' | 'projected' | 'unknown' | 'dead';
