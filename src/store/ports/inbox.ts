// Reads of the inbox by id and its counts, outside any transaction.
import type { InboxState } from '../inbox-state.js';
import type { InboxRow } from '../rows.js';

export interface InboxPort {
  inboxRow(inboxId: number): Promise<InboxRow | undefined>;
  counts(): Promise<Record<InboxState, number> & { handler_failures: number }>;
  /** Whether any row is pending (after a crash, or written by another process). */
  hasPending(): Promise<boolean>;
}
