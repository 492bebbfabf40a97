// The inbox columns an `InboxRow` is read from, for every family that reads inbox rows.
import type { InboxRow } from '../rows.js';
import { bodyOf } from '../bodies.js';
import { identityText } from '../identities.js';

export const INBOX_COLUMNS = `inbox_id, account, received_at, raw, identity, raw_sha256, kind, verdict, secret_id, state, reasons, attempts, processed_at, handlers_pending, trace_context, codec`;

/** The same columns named by table, for an UPDATE … FROM that returns them. */
export const INBOX_COLUMNS_OF_INBOX = INBOX_COLUMNS.split(', ')
  .map((c) => `inbox.${c}`)
  .join(', ');

/** The type parsers read these columns as an InboxRow wants them; the body is decoded (bodies.ts). */
export function asInboxRow(row: Record<string, unknown>): InboxRow {
  const { codec, ...rest } = row as unknown as InboxRow & { codec: number | null };
  return { ...rest, raw: bodyOf(codec, rest.raw), identity: identityText(rest.identity) };
}
