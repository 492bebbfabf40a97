// The inbox columns an `InboxRow` is read from, for every family that reads inbox rows.
import type { InboxRow } from '../rows.js';

export const INBOX_COLUMNS = `inbox_id, account, received_at, raw, identity, raw_sha256, kind, verdict, secret_id, state, reasons, attempts, processed_at, handlers_pending, trace_context`;

/** The same columns named by table, for an UPDATE … FROM that returns them. */
export const INBOX_COLUMNS_OF_INBOX = INBOX_COLUMNS.split(', ')
  .map((c) => `inbox.${c}`)
  .join(', ');

/** The type parsers read these columns as an InboxRow wants them. */
export const asInboxRow = (row: Record<string, unknown>): InboxRow => row as unknown as InboxRow;
