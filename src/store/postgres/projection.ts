// Projection writes: the projected rows a batch touches, locked and read in one transaction with
// the claim, written back whole, and the reset a rebuild starts from; all of one account, whose
// rows are keyed (account, id) and whose credits row is keyed by the account alone.
import type { InterviewResponse } from '../../tables/rows.js';
import type { RowKeys, RowWrites, StoredRow, StoredRows } from '../../tables/stored.js';
import {
  CAMPAIGN_COLUMNS,
  CANDIDATE_COLUMNS,
  CREDITS_COLUMNS,
  type CampaignRow,
  type CandidateRow,
  type CreditsRow,
} from '../../tables/rows.js';
import { recount } from './counters.js';
import { query, type Session } from './session.js';

// PostgreSQL types of the projected columns (docs/projection.md section 7), for the array casts below.
const COLUMN_TYPES: Record<string, string> = {
  campaign_id: 'text',
  job_title: 'text',
  contract_type: 'text',
  candidate_link: 'text',
  questions_count: 'integer',
  status: 'text',
  created_at: 'timestamptz',
  candidate_id: 'text',
  first_name: 'text',
  last_name: 'text',
  email: 'text',
  phone: 'text',
  is_sourced: 'boolean',
  call_queued: 'boolean',
  sms_sent: 'boolean',
  interview_score: 'double precision',
  interview_date: 'timestamptz',
  interview_started_at: 'timestamptz',
  availability: 'text',
  availability_start: 'text',
  salary_expectation: 'text',
  candidate_alignment: 'text',
  strengths: 'text',
  concerns: 'text',
  failure_reason: 'text',
  added_at: 'timestamptz',
  credits_remaining: 'double precision',
  low_threshold: 'double precision',
  last_campaign_id: 'text',
  account: 'text',
  field_versions: 'text',
};

/** Locks and reads the account's rows of these keys, until `tx` ends; a key with no row yet gets an empty one. */
export async function lockRows(tx: Session, account: string, keys: RowKeys): Promise<StoredRows> {
  const [campaigns, candidates, credits] = [
    await lockTable<CampaignRow>(tx, account, 'campaigns', 'campaign_id', CAMPAIGN_COLUMNS, keys.campaigns),
    await lockTable<CandidateRow>(tx, account, 'candidates', 'candidate_id', CANDIDATE_COLUMNS, keys.candidates),
    keys.credits ? await lockCredits(tx, account) : undefined,
  ];
  return { campaigns, candidates, credits };
}

/** Writes the account's rows back whole, and replaces the interview responses of each candidate named. */
export async function saveRows(tx: Session, account: string, writes: RowWrites): Promise<void> {
  await saveTable(tx, account, 'campaigns', 'campaign_id', CAMPAIGN_COLUMNS, writes.campaigns, (r) => r.campaign_id);
  await saveTable(tx, account, 'candidates', 'candidate_id', CANDIDATE_COLUMNS, writes.candidates, (r) => r.candidate_id);
  if (writes.credits) await saveTable(tx, account, 'credits', 'account', CREDITS_COLUMNS, [writes.credits], () => account);
  if (writes.responses.size > 0) await replaceResponses(tx, account, writes.responses);
}

/**
 * Empties the account's projected rows and makes every accepted event of it pending again; returns
 * how many, and counts its counters again. Row by row (DELETE, not TRUNCATE): other accounts go on
 * projecting meanwhile.
 */
export async function resetProjection(tx: Session, account: string): Promise<number> {
  for (const table of ['interview_responses', 'candidates', 'campaigns', 'credits']) {
    await query(tx, `DELETE FROM ${table} WHERE account = $1`, [account]);
  }
  const reset = await query<{ n: number }>(
    tx,
    `WITH reset AS (UPDATE inbox SET state = 'pending' WHERE account = $1 AND verdict = 'accepted' RETURNING 1) SELECT COUNT(*)::int AS n FROM reset`,
    [account],
  );
  // The triggers kept the counters; counted again from the rows, a rebuild also mends any that were not.
  await recount(tx, account);
  return reset[0]!.n;
}

async function lockTable<T>(tx: Session, account: string, table: string, key: string, columns: readonly string[], keys: readonly string[]) {
  const found = new Map<string, StoredRow<T>>();
  if (keys.length === 0) return found;
  // Create what is missing, in key order, then lock in key order: processes never wait in a cycle.
  // The rows made here are `absent` as SQLite's are: new to the table (the feed records them).
  const created = await query<{ key: string }>(
    tx,
    `INSERT INTO ${table} (account, ${key}) SELECT $2::text, k FROM unnest($1::text[]) AS k ORDER BY k ON CONFLICT (account, ${key}) DO NOTHING RETURNING ${key} AS key`,
    [keys, account],
  );
  const made = new Set(created.map((r) => r.key));
  const rows = await query<Record<string, unknown>>(
    tx,
    `SELECT ${key}, ${columns.join(', ')}, field_versions FROM ${table} WHERE account = $2 AND ${key} = ANY($1::text[]) ORDER BY ${key} FOR UPDATE`,
    [keys, account],
  );
  for (const { field_versions, ...row } of rows) {
    const k = String(row[key]);
    found.set(k, { row: row as T, field_versions: field_versions as string, ...(made.has(k) && { absent: true }) });
  }
  return found;
}

/** The account's credits row, created when missing, locked. */
async function lockCredits(tx: Session, account: string): Promise<StoredRow<CreditsRow> | undefined> {
  const created = await query(tx, 'INSERT INTO credits (account) VALUES ($1) ON CONFLICT (account) DO NOTHING RETURNING 1', [account]);
  const [stored] = await query<CreditsRow & { field_versions: string }>(
    tx,
    `SELECT ${CREDITS_COLUMNS.join(', ')}, field_versions FROM credits WHERE account = $1 FOR UPDATE`,
    [account],
  );
  if (stored === undefined) return undefined;
  const { field_versions, ...row } = stored;
  return { row, field_versions, ...(created.length > 0 && { absent: true }) };
}

async function saveTable<T>(
  tx: Session,
  account: string,
  table: string,
  key: string,
  columns: readonly string[],
  rows: readonly StoredRow<T>[],
  keyOf: (row: T) => string,
) {
  if (rows.length === 0) return;
  const all = [key, ...columns, 'field_versions'];
  const values = all.map((column) =>
    rows.map(({ row, field_versions }) =>
      column === key ? keyOf(row) : column === 'field_versions' ? field_versions : ((row as Record<string, unknown>)[column] ?? null),
    ),
  );
  // Credits is keyed by the account itself; the other tables by (account, key).
  const scope = key === 'account' ? '' : `${table}.account = $${all.length + 1} AND `;
  await query(
    tx,
    `UPDATE ${table} SET ${[...columns, 'field_versions'].map((column) => `${column} = v.${column}`).join(', ')}
     FROM unnest(${all.map((column, i) => `$${i + 1}::${COLUMN_TYPES[column]}[]`).join(', ')}) AS v(${all.join(', ')})
     WHERE ${scope}${table}.${key} = v.${key}`,
    key === 'account' ? values : [...values, account],
  );
}

async function replaceResponses(tx: Session, account: string, responses: ReadonlyMap<string, readonly InterviewResponse[]>): Promise<void> {
  const ids = [...responses.keys()];
  await query(tx, 'DELETE FROM interview_responses WHERE account = $2 AND candidate_id = ANY($1::text[])', [ids, account]);
  const flat = [...responses].flatMap(([id, answers]) => answers.map((r, position) => ({ id, position, ...r })));
  if (flat.length > 0) {
    await query(
      tx,
      `INSERT INTO interview_responses (account, candidate_id, position, question, answer, score, explanation)
       SELECT $7::text, * FROM unnest($1::text[], $2::integer[], $3::text[], $4::text[], $5::double precision[], $6::text[])`,
      [
        flat.map((r) => r.id),
        flat.map((r) => r.position),
        flat.map((r) => r.question),
        flat.map((r) => r.answer),
        flat.map((r) => r.score),
        flat.map((r) => r.explanation),
        account,
      ],
    );
  }
}
