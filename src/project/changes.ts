// The changes a projected batch makes (docs/projection.md section 10): one per row whose columns of
// section 4 differ after the batch (or whose interview responses were replaced, or that is new),
// naming the events that moved it. Pure: the store numbers and records them.
import type { ChangeEntity, ChangeRecord, StoredChange } from '../tables/changes.js';
import type { RowWrites, StoredRow, StoredRows } from '../tables/stored.js';
import type { CampaignRow, CandidateRow, CreditsRow } from '../tables/rows.js';

/** A campaign as a change carries it: its section 4 columns. */
function campaignChangeRow(row: CampaignRow): Record<string, unknown> {
  const { campaign_id, job_title, contract_type, candidate_link, questions_count, status, created_at } = row;
  return { campaign_id, job_title, contract_type, candidate_link, questions_count, status, created_at };
}

/** A candidate as a change carries it: its section 4 columns, booleans as booleans (not `added_at`, which is the list's own). */
function candidateChangeRow(row: CandidateRow): Record<string, unknown> {
  const { added_at: _, ...columns } = row;
  return columns;
}

/** The account's credits as a change carries them. */
function creditsChangeRow(row: CreditsRow): Record<string, unknown> {
  const { credits_remaining, low_threshold, last_campaign_id } = row;
  return { credits_remaining, low_threshold, last_campaign_id };
}

/** Which events moved which rows: `table:key` to their identities, in the order folded. */
export type Causes = Map<string, string[]>;

export function causeKey(table: 'campaigns' | 'candidates' | 'credits', key: string): string {
  return `${table}:${key}`;
}

function sameColumns(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  for (const column of Object.keys(a)) if (!Object.is(a[column], b[column])) return false;
  return true;
}

function changesOf<T>(
  entity: ChangeEntity,
  writes: ReadonlyArray<{ key: string; written: StoredRow<T> }>,
  stored: (key: string) => StoredRow<T> | undefined,
  toRow: (row: T) => Record<string, unknown>,
  causesOf: (key: string) => readonly string[],
  replaced: (key: string) => boolean = () => false,
): ChangeRecord[] {
  const changes: ChangeRecord[] = [];
  for (const { key, written } of writes) {
    const before = stored(key);
    const row = toRow(written.row);
    const same = before !== undefined && before.absent !== true && sameColumns(row, toRow(before.row)) && !replaced(key);
    if (same) continue;
    changes.push({ entity, id: key, op: 'upsert', row, events: [...new Set(causesOf(key))] });
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

/**
 * A change as the feed and the destinations carry it (docs/projection.md section 10): `seq` from 1
 * per account in commit order, the entity and its key, `upsert` with the row after the change
 * (the columns of section 4) or `erase` with none, when it was recorded, and the identities of the
 * events that caused it.
 */
export interface Change {
  /** From 1, strictly increasing per account in commit order: the cursor of the feed. */
  seq: number;
  /** Which projected row changed. */
  entity: 'campaign' | 'candidate' | 'credits';
  /** The row's key: its `campaign_id` or `candidate_id`, or the account for `credits`. */
  id: string;
  /** `upsert`: `row` is the row after the change; `erase`: the candidate was erased, `row` is null. */
  op: 'upsert' | 'erase';
  /** The row after the change, with the columns of the projected tables (docs/projection.md section 4); null for `erase`. */
  row: Record<string, unknown> | null;
  /** When the change was committed: UTC ISO 8601 with milliseconds. */
  at: string;
  /** The identities of the events that caused it (none for an erasure). */
  events: string[];
}

/** A recorded change as the feed serves it. */
export function changeOf(stored: StoredChange): Change {
  return {
    seq: stored.seq,
    entity: stored.entity,
    id: stored.id,
    op: stored.op,
    row: stored.row === null ? null : (JSON.parse(stored.row) as Record<string, unknown>),
    at: stored.at,
    events: JSON.parse(stored.events) as string[],
  };
}
