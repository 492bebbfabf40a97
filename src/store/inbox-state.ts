// An inbox row's state, in a file of its own so that the ports (store/ports/) and store.ts can
// both name it without importing each other.
export type InboxState = 'pending' | 'projected' | 'unknown' | 'dead';
