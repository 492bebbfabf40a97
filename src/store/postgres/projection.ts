// Projection writes: the projected rows a batch touches, locked and read in one transaction with
// the claim, written back whole, and the reset a rebuild starts from.
import type { InterviewResponse } from '../tables.js';
import type { RowKeys, RowWrites, StoredRow, StoredRows } from '../store.js';
import { CAMPAIGN_COLUMNS, CANDIDATE_COLUMNS, CREDITS_COLUMNS, type CampaignRow, type CandidateRow, type CreditsRow } from '../tables.js';
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
  account: 'integer',
  field_versions: 'text',
};

/** Locks and reads the rows of these keys, until `tx` ends; a key with no row yet gets an empty one. */
export async function lockRows(tx: Session, keys: RowKeys): Promise<StoredRows> {
  const [campaigns, candidates, credits] = [
    await lockTable<CampaignRow>(tx, 'campaigns', 'campaign_id', CAMPAIGN_COLUMNS, keys.campaigns),
    await lockTable<CandidateRow>(tx, 'candidates', 'candidate_id', CANDIDATE_COLUMNS, keys.candidates),
    keys.credits ? await lockTable<CreditsRow>(tx, 'credits', 'account', CREDITS_COLUMNS, [1]) : undefined,
  ];
  return { campaigns, candidates, credits: credits?.get('1') };
}

/** Writes the rows back whole, and replaces the interview responses of each candidate named. */
export async function saveRows(tx: Session, writes: RowWrites): Promise<void> {
  await saveTable(tx, 'campaigns', 'campaign_id', CAMPAIGN_COLUMNS, writes.campaigns, (r) => r.campaign_id);
  await saveTable(tx, 'candidates', 'candidate_id', CANDIDATE_COLUMNS, writes.candidates, (r) => r.candidate_id);
  if (writes.credits) await saveTable(tx, 'credits', 'account', CREDITS_COLUMNS, [writes.credits], () => 1);
  if (writes.responses.size > 0) await replaceResponses(tx, writes.responses);
}

/** Empties the projected tables and makes every accepted event pending again; returns how many. */
export async function resetProjection(tx: Session): Promise<number> {
  await query(tx, 'TRUNCATE interview_responses, candidates, campaigns, credits');
  const reset = await query<{ n: number }>(
    tx,
    `WITH reset AS (UPDATE inbox SET state = 'pending' WHERE verdict = 'accepted' RETURNING 1) SELECT COUNT(*)::int AS n FROM reset`,
  );
  return reset[0]!.n;
}

async function lockTable<T>(tx: Session, table: string, key: string, columns: readonly string[], keys: readonly (string | number)[]) {
  const found = new Map<string, StoredRow<T>>();
  if (keys.length === 0) return found;
  const type = COLUMN_TYPES[key]!;
  // Create what is missing, in key order, then lock in key order: processes never wait in a cycle.
  await query(tx, `INSERT INTO ${table} (${key}) SELECT k FROM unnest($1::${type}[]) AS k ORDER BY k ON CONFLICT (${key}) DO NOTHING`, [
    keys,
  ]);
  const rows = await query<Record<string, unknown>>(
    tx,
    `SELECT ${key}, ${columns.join(', ')}, field_versions FROM ${table} WHERE ${key} = ANY($1::${type}[]) ORDER BY ${key} FOR UPDATE`,
    [keys],
  );
  for (const { field_versions, ...row } of rows) {
    const id = String(row[key]);
    if (table === 'credits') delete row.account;
    found.set(id, { row: row as T, field_versions: field_versions as string });
  }
  return found;
}

async function saveTable<T>(
  tx: Session,
  table: string,
  key: string,
  columns: readonly string[],
  rows: readonly StoredRow<T>[],
  keyOf: (row: T) => string | number,
) {
  if (rows.length === 0) return;
  const all = [key, ...columns, 'field_versions'];
  const values = all.map((column) =>
    rows.map(({ row, field_versions }) =>
      column === key ? keyOf(row) : column === 'field_versions' ? field_versions : ((row as Record<string, unknown>)[column] ?? null),
    ),
  );
  await query(
    tx,
    `UPDATE ${table} SET ${[...columns, 'field_versions'].map((column) => `${column} = v.${column}`).join(', ')}
     FROM unnest(${all.map((column, i) => `$${i + 1}::${COLUMN_TYPES[column]}[]`).join(', ')}) AS v(${all.join(', ')})
     WHERE ${table}.${key} = v.${key}`,
    values,
  );
}

async function replaceResponses(tx: Session, responses: ReadonlyMap<string, readonly InterviewResponse[]>): Promise<void> {
  const ids = [...responses.keys()];
  await query(tx, 'DELETE FROM interview_responses WHERE candidate_id = ANY($1::text[])', [ids]);
  const flat = [...responses].flatMap(([id, answers]) => answers.map((r, position) => ({ id, position, ...r })));
  if (flat.length > 0) {
    await query(
      tx,
      `INSERT INTO interview_responses (candidate_id, position, question, answer, score, explanation)
       SELECT * FROM unnest($1::text[], $2::integer[], $3::text[], $4::text[], $5::double precision[], $6::text[])`,
      [
        flat.map((r) => r.id),
        flat.map((r) => r.position),
        flat.map((r) => r.question),
        flat.map((r) => r.answer),
        flat.map((r) => r.score),
        flat.map((r) => r.explanation),
      ],
    );
  }
}
