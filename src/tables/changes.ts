// The changes of the projected rows (docs/projection.md section 10): what the projection or an
// erasure records, and a change as the store keeps it. Plain data, of no engine.

/** What a change is about (docs/projection.md section 10): a row of `campaigns`, of `candidates`, or the account's `credits`. */
export type ChangeEntity = 'campaign' | 'candidate' | 'credits';

/** A change before it is numbered: what the projection (or an erasure) hands the store to record. */
export interface ChangeRecord {
  entity: ChangeEntity;
  /** The row's key: `campaign_id`, `candidate_id`, or the account for `credits`. */
  id: string;
  op: 'upsert' | 'erase';
  /** The row after the change, with exactly the columns of docs/projection.md section 4; null for `erase`. */
  row: Record<string, unknown> | null;
  /** The identities of the events that caused it. */
  events: readonly string[];
}

/** A recorded change, as the store keeps it: `row` and `events` as the JSON text written. */
export interface StoredChange {
  seq: number;
  entity: ChangeEntity;
  id: string;
  op: 'upsert' | 'erase';
  /** JSON of the row; null for `erase`. */
  row: string | null;
  /** UTC ISO 8601 with milliseconds: when it was recorded. */
  at: string;
  /** JSON array of event identities. */
  events: string;
}
