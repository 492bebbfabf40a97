// The changes of the projected rows (docs/projection.md section 10): what the projection or an
// erasure records, and a change as the store keeps it. Plain data, of no engine.
import { CAMPAIGN_COLUMNS, CANDIDATE_COLUMNS, CREDITS_COLUMNS } from './rows.js';

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

/**
 * The columns of a change's row (docs/projection.md section 10) in the order the store keeps
 * their values: a row is stored as a JSON array, the format's number then the values, rather
 * than an object repeating every column's name in every change (about a quarter of its bytes).
 */
export const CHANGE_ROW_COLUMNS = {
  campaign: ['campaign_id', ...CAMPAIGN_COLUMNS],
  candidate: ['candidate_id', ...CANDIDATE_COLUMNS.filter((column) => column !== 'added_at')],
  credits: [...CREDITS_COLUMNS],
} as const satisfies Record<ChangeEntity, readonly string[]>;

/** The first value of a row stored as an array: the order of CHANGE_ROW_COLUMNS it follows. */
const ROW_FORMAT = 1;

/** A change's row as the store keeps it: `[1, value, …]` in the order of CHANGE_ROW_COLUMNS. */
export function storedChangeRow(entity: ChangeEntity, row: object): string {
  const columns = CHANGE_ROW_COLUMNS[entity];
  const values: unknown[] = [ROW_FORMAT];
  for (const column of columns) values.push((row as Record<string, unknown>)[column] ?? null);
  return JSON.stringify(values);
}

/**
 * A stored change's row as the feed carries it: an array in the order of CHANGE_ROW_COLUMNS, or
 * an object (a row recorded before 0.6.0, or a candidate's keys kept by an erasure).
 */
export function changeRowOf(entity: ChangeEntity, text: string): Record<string, unknown> {
  const parsed = JSON.parse(text) as Record<string, unknown> | unknown[];
  if (!Array.isArray(parsed)) return parsed;
  const values = parsed;
  if (values[0] !== ROW_FORMAT) throw new Error(`a change's row in format ${String(values[0])}, which this version does not read`);
  const row: Record<string, unknown> = {};
  CHANGE_ROW_COLUMNS[entity].forEach((column, i) => {
    row[column] = values[i + 1];
  });
  return row;
}

/** Where a stored candidate change's array keeps its `campaign_id` (an erasure keeps it, with the key). */
export const CANDIDATE_CAMPAIGN_INDEX = 1 + CHANGE_ROW_COLUMNS.candidate.indexOf('campaign_id');
