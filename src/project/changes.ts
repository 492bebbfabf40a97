// The changes a projected batch makes (docs/projection.md section 10): one per row whose columns of
// section 4 differ after the batch (or whose interview responses were replaced, or that is new),
// naming the events that moved it. Pure: the store numbers and records them.
import { CHANGE_ROW_COLUMNS, changeRowOf, type ChangeEntity, type ChangeRecord, type StoredChange } from '../tables/changes.js';
import type { RowWrites, StoredRow, StoredRows } from '../tables/stored.js';
import type { CampaignRow, CandidateRow, CreditsRow } from '../tables/rows.js';

/** A campaign as a change carries it: its section 4 columns. */
function campaignChangeRow(row: CampaignRow): CampaignChangeRow {
  const { campaign_id, job_title, contract_type, candidate_link, questions_count, status, created_at } = row;
  return { campaign_id, job_title, contract_type, candidate_link, questions_count, status, created_at };
}

/** A candidate as a change carries it: its section 4 columns, booleans as booleans (not `added_at`, which is the list's own). */
function candidateChangeRow(row: CandidateRow): CandidateChangeRow {
  const { added_at: _, ...columns } = row;
  return columns;
}

/** The account's credits as a change carries them. */
function creditsChangeRow(row: CreditsRow): CreditsChangeRow {
  const { credits_remaining, low_threshold, last_campaign_id } = row;
  return { credits_remaining, low_threshold, last_campaign_id };
}

/** Which events moved which rows: `table:key` to their identities, in the order folded. */
export type Causes = Map<string, string[]>;

export function causeKey(table: 'campaigns' | 'candidates' | 'credits', key: string): string {
  return `${table}:${key}`;
}

/** Whether two rows hold the same values in the columns a change carries (read in place: no copy of either is made). */
function sameColumns(columns: readonly string[], a: object, b: object): boolean {
  const [after, before] = [a as Record<string, unknown>, b as Record<string, unknown>];
  for (const column of columns) if (!Object.is(after[column], before[column])) return false;
  return true;
}

/** The causes once each, in the order folded (most rows have one). */
function distinct(causes: readonly string[]): string[] {
  return causes.length < 2 ? [...causes] : [...new Set(causes)];
}

function changesOf<T>(
  entity: ChangeEntity,
  writes: ReadonlyArray<{ key: string; written: StoredRow<T> }>,
  stored: (key: string) => StoredRow<T> | undefined,
  toRow: (row: T) => object,
  causesOf: (key: string) => readonly string[],
  replaced: (key: string) => boolean = () => false,
): ChangeRecord[] {
  const changes: ChangeRecord[] = [];
  const columns = CHANGE_ROW_COLUMNS[entity];
  for (const { key, written } of writes) {
    const before = stored(key);
    const same =
      before !== undefined && before.absent !== true && !replaced(key) && sameColumns(columns, written.row as object, before.row as object);
    if (same) continue;
    changes.push({ entity, id: key, op: 'upsert', row: toRow(written.row) as Record<string, unknown>, events: distinct(causesOf(key)) });
  }
  return changes;
}

/**
 * The changes of a batch: `stored` as the rows were locked, `writes` as the fold left them, for
 * `account` (the key of its credits). A row written back with the same columns (a version moved,
 * no value) records nothing.
 */
export function changesOfBatch(account: string, stored: StoredRows, writes: RowWrites, causes: Causes): ChangeRecord[] {
  return [
    ...changesOf(
      'campaign',
      writes.campaigns.map((written) => ({ key: written.row.campaign_id, written })),
      (key) => stored.campaigns.get(key),
      campaignChangeRow,
      (key) => causes.get(causeKey('campaigns', key)) ?? [],
    ),
    ...changesOf(
      'candidate',
      writes.candidates.map((written) => ({ key: written.row.candidate_id, written })),
      (key) => stored.candidates.get(key),
      candidateChangeRow,
      (key) => causes.get(causeKey('candidates', key)) ?? [],
      (key) => writes.responses.has(key),
    ),
    ...changesOf(
      'credits',
      writes.credits === undefined ? [] : [{ key: account, written: writes.credits }],
      () => stored.credits,
      creditsChangeRow,
      () => causes.get(causeKey('credits', 'account')) ?? [],
    ),
  ];
}

/** What every change carries beside its entity, key, operation and row. */
export interface ChangeFields {
  /** From 1, strictly increasing per account in commit order: the cursor of the feed. */
  seq: number;
  /** When the change was committed: UTC ISO 8601 with milliseconds. */
  at: string;
  /** The identities of the events that caused it (none for an erasure). */
  events: string[];
}

/** A campaign as a change carries it: the columns of `campaigns` (docs/projection.md section 4). */
export type CampaignChangeRow = CampaignRow;
/** A candidate as a change carries it: the columns of `candidates` but `added_at`, the list's own. */
export type CandidateChangeRow = Omit<CandidateRow, 'added_at'>;
/** The account's credits as a change carries them: the columns of `credits` but its key. */
export type CreditsChangeRow = CreditsRow;

/** A campaign's row after a change; `id` is its `campaign_id`. Campaigns are never erased. */
export interface CampaignChange extends ChangeFields {
  /** A row of `campaigns`. */
  entity: 'campaign';
  /** The campaign's `campaign_id`. */
  id: string;
  /** The row was written (campaigns are never erased). */
  op: 'upsert';
  /** The row after the change. */
  row: CampaignChangeRow;
}

/**
 * A candidate's change recorded before the candidate was erased: its row reduced to its keys
 * (docs/projection.md section 10), nothing of the person left.
 */
export type RedactedCandidateRow = Pick<CandidateChangeRow, 'candidate_id' | 'campaign_id'>;

/**
 * A candidate's row after a change (its keys only once the candidate was erased: test
 * `'status' in change.row`, say), or its erasure (`op: 'erase'`, `row` null); `id` is its `candidate_id`.
 */
export type CandidateChange = ChangeFields & {
  entity: 'candidate';
  /** The candidate's `candidate_id`. */
  id: string;
} & ({ op: 'upsert'; row: CandidateChangeRow | RedactedCandidateRow } | { op: 'erase'; row: null });

/** The account's credits after a change; `id` is the account. */
export interface CreditsChange extends ChangeFields {
  /** The account's row of `credits`. */
  entity: 'credits';
  /** The account's name (`default` for the default account). */
  id: string;
  /** The row was written. */
  op: 'upsert';
  /** The row after the change. */
  row: CreditsChangeRow;
}

/**
 * A change as the feed and the destinations carry it (docs/projection.md section 10): `seq` from 1
 * per account in commit order, the entity and its key, `upsert` with the row after the change
 * (the columns of section 4) or, for a candidate, `erase` with none, when it was recorded, and
 * the identities of the events that caused it. Narrow it on `entity` (and `op`) to read `row`.
 */
export type Change = CampaignChange | CandidateChange | CreditsChange;

/** A recorded change as the feed serves it. */
export function changeOf(stored: StoredChange): Change {
  // The store holds what the projection recorded for the entity, so the row is of its shape.
  return {
    seq: stored.seq,
    entity: stored.entity,
    id: stored.id,
    op: stored.op,
    row: stored.row === null ? null : changeRowOf(stored.entity, stored.row),
    at: stored.at,
    events: JSON.parse(stored.events) as string[],
  } as Change;
}
