// The inbox's instants of receipt and processing are ISO 8601 text above the store. SQLite keeps
// them as Unix ms (6 bytes against 24, in the row and in inbox_by_received: migration 026);
// PostgreSQL as timestamptz, which its reads give as ISO text. A value that is not an instant (a
// row written by hand) is kept, and read, as the text it was.

/** An instant as SQLite's inbox keeps it. */
export function instantMs(iso: string): number | string;
export function instantMs(iso: string | null): number | string | null;
export function instantMs(iso: string | null): number | string | null {
  if (iso === null) return null;
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : iso;
}

/** A row's instants of receipt and processing as ISO 8601 text, whichever way its engine keeps them. */
export function withInstantTexts<R extends { received_at: unknown; processed_at: unknown }>(
  row: R,
): R & { received_at: string; processed_at: string | null } {
  return { ...row, received_at: instantText(row.received_at)!, processed_at: instantText(row.processed_at) };
}

/** An instant as read from either engine, as ISO 8601 text. */
export function instantText(stored: unknown): string | null {
  if (stored === null || stored === undefined) return null;
  if (typeof stored === 'number' || typeof stored === 'bigint') return new Date(Number(stored)).toISOString();
  if (stored instanceof Date) return stored.toISOString();
  return typeof stored === 'string' ? stored : null;
}
