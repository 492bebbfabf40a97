import type Database from 'better-sqlite3';
import type { ProjectedState } from '../../src/project/fold.js';
import type { Store } from '../../src/store/store.js';
import { sqlOn, type TestDatabase } from './sql.js';
import { changeRowOf, type ChangeEntity } from '../../src/tables/changes.js';

// The public contract of docs/projection.md section 4, read back as users read it.
const CAMPAIGN = ['campaign_id', 'job_title', 'contract_type', 'candidate_link', 'questions_count', 'status', 'created_at'];
const CANDIDATE = [
  'candidate_id',
  'campaign_id',
  'first_name',
  'last_name',
  'email',
  'phone',
  'is_sourced',
  'call_queued',
  'sms_sent',
  'status',
  'interview_score',
  'interview_date',
  'interview_started_at',
  'availability',
  'availability_start',
  'salary_expectation',
  'candidate_alignment',
  'strengths',
  'concerns',
  'failure_reason',
];
const RESPONSE = ['candidate_id', 'position', 'question', 'answer', 'score', 'explanation'];
const CREDITS = ['credits_remaining', 'low_threshold', 'last_campaign_id'];

export interface Tables {
  campaigns: Record<string, unknown>[];
  candidates: Record<string, unknown>[];
  interview_responses: Record<string, unknown>[];
  credits: Record<string, unknown> | null;
}

// SQLite stores these as 1/0, PostgreSQL as boolean; the queries (and the fixtures) say true/false.
const BOOLEANS = new Set(['is_sourced', 'call_queued', 'sms_sent']);
const flag = (column: string, v: unknown) => (BOOLEANS.has(column) && typeof v === 'number' ? v === 1 : v);
const booleans = (row: Record<string, unknown>) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, flag(k, v)]));

export function readTables(db: Database.Database): Tables {
  return {
    campaigns: db.prepare(`SELECT ${CAMPAIGN.join(', ')} FROM campaigns ORDER BY campaign_id`).all() as Record<string, unknown>[],
    candidates: (db.prepare(`SELECT ${CANDIDATE.join(', ')} FROM candidates ORDER BY candidate_id`).all() as Record<string, unknown>[]).map(
      booleans,
    ),
    interview_responses: db
      .prepare(`SELECT ${RESPONSE.join(', ')} FROM interview_responses ORDER BY candidate_id, position`)
      .all() as Record<string, unknown>[],
    credits: (db.prepare(`SELECT ${CREDITS.join(', ')} FROM credits`).get() as Record<string, unknown> | undefined) ?? null,
  };
}

const byKey = (key: string) => (a: Record<string, unknown>, b: Record<string, unknown>) =>
  String(a[key]) < String(b[key]) ? -1 : String(a[key]) > String(b[key]) ? 1 : 0;
const pick = (row: object, columns: string[]) => Object.fromEntries(columns.map((c) => [c, (row as Record<string, unknown>)[c] ?? null]));

/** An in-memory fold in the same shape as `readTables`. */
export function stateTables(state: ProjectedState): Tables {
  return {
    campaigns: [...state.campaigns.values()].map((v) => pick(v.row, CAMPAIGN)).sort(byKey('campaign_id')),
    candidates: [...state.candidates.values()].map((v) => pick(v.row, CANDIDATE)).sort(byKey('candidate_id')),
    interview_responses: [...state.responses.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .flatMap(([candidate_id, responses]) => responses.map((r, position) => ({ candidate_id, position, ...r }))),
    credits: state.credits === null ? null : pick(state.credits.row, CREDITS),
  };
}

/**
 * The same read of a store's database, on either engine (booleans as true/false on both): every
 * account's rows, or one account's (docs/projection.md section 9).
 */
export async function readStoreTables(database: TestDatabase, options: { account?: string } = {}): Promise<Tables> {
  const sql = sqlOn(database);
  const { account } = options;
  const where = account === undefined ? '' : 'WHERE account = ?';
  const rows = async (text: string) =>
    (await sql.query<Record<string, unknown>>(text, account === undefined ? [] : [account])).map(booleans);
  const credits = await rows(`SELECT ${CREDITS.join(', ')} FROM credits ${where}`);
  return {
    campaigns: await rows(`SELECT ${CAMPAIGN.join(', ')} FROM campaigns ${where} ORDER BY campaign_id`),
    candidates: await rows(`SELECT ${CANDIDATE.join(', ')} FROM candidates ${where} ORDER BY candidate_id`),
    interview_responses: await rows(`SELECT ${RESPONSE.join(', ')} FROM interview_responses ${where} ORDER BY candidate_id, position`),
    credits: credits[0] ?? null,
  };
}

/**
 * One account's projected rows whole, every column but `account` (field versions, `added_at`
 * included), by key: to compare two databases of one engine row for row.
 */
export async function readAccountRows(database: TestDatabase, account: string): Promise<Record<string, Record<string, unknown>[]>> {
  const sql = sqlOn(database);
  const keys = { campaigns: 'campaign_id', candidates: 'candidate_id', interview_responses: 'candidate_id, position', credits: 'account' };
  const read = async ([table, key]: [string, string]) => {
    const rows = await sql.query<Record<string, unknown>>(`SELECT * FROM ${table} WHERE account = ? ORDER BY ${key}`, [account]);
    return [table, rows.map(({ account: _, ...row }) => booleans(row))] as const;
  };
  return Object.fromEntries(await Promise.all(Object.entries(keys).map(read)));
}

/** An account's state as its store view reads it (`projected`, and `people` for the candidates' ids), in the shape of `readTables`. */
export async function readViewTables(view: Pick<Store, 'projected' | 'people'>): Promise<Tables> {
  const ids: string[] = [];
  for (let page; (page = await view.people.candidateVersions(ids.at(-1) ?? '', 100)).length > 0;)
    ids.push(...page.map((r) => r.candidate_id));
  ids.sort();
  const campaigns = await Promise.all((await view.projected.campaignIds()).map((id) => view.projected.campaign(id)));
  const responses = await Promise.all(
    ids.map(async (candidate_id) =>
      (await view.projected.responses(candidate_id)).map((r, position) => ({ candidate_id, position, ...r })),
    ),
  );
  const credits = await view.projected.credits();
  return {
    campaigns: campaigns.map((row) => pick(row ?? {}, CAMPAIGN)).sort(byKey('campaign_id')),
    candidates: (await view.projected.candidates(ids)).map((row) => pick(row, CANDIDATE)).sort(byKey('candidate_id')),
    interview_responses: responses.flat(),
    credits: credits === undefined ? null : pick(credits, CREDITS),
  };
}

/** Empties every table a test writes, on either engine (between property-test runs). */
export async function emptyTables(database: TestDatabase): Promise<void> {
  const sql = sqlOn(database);
  for (const table of [
    'handler_failures',
    'interview_responses',
    'candidates',
    'campaigns',
    'credits',
    'inbox',
    'erasure_hooks',
    'erasures',
    'changes',
    'change_heads',
    'rebuild_campaigns',
    'rebuild_candidates',
    'rebuild_credits',
  ]) {
    await sql.query(`DELETE FROM ${table}`);
  }
}

/** One recorded change, as read back from the `changes` table (`row` and `events` parsed). */
export interface ChangeRead {
  seq: number;
  entity: string;
  id: string;
  op: string;
  row: Record<string, unknown> | null;
  at: string;
  events: string[];
}

/** An account's changes in `seq` order, on either engine. */
export async function readChanges(database: TestDatabase, account = 'default'): Promise<ChangeRead[]> {
  const rows = await sqlOn(database).query<{
    seq: number | string;
    entity: string;
    id: string;
    op: string;
    row: string | null;
    at: string;
    events: string;
  }>('SELECT seq, entity, id, op, row, at, events FROM changes WHERE account = ? ORDER BY seq', [account]);
  return rows.map((r) => ({
    ...r,
    seq: Number(r.seq),
    row: r.row === null ? null : changeRowOf(r.entity as ChangeEntity, r.row),
    events: JSON.parse(r.events) as string[],
  }));
}

/**
 * The fold of changes in `seq` order (docs/projection.md section 10): the last upsert of each
 * entity, removed by an erase; in the shape of `readStoreTables` without the responses.
 */
export function foldChanges(changes: readonly ChangeRead[]): Omit<Tables, 'interview_responses'> {
  const state = new Map<string, Record<string, unknown>>();
  for (const change of changes) {
    const key = `${change.entity}:${change.id}`;
    if (change.op === 'erase') state.delete(key);
    else state.set(key, change.row!);
  }
  const of = (entity: string) => [...state.entries()].filter(([k]) => k.startsWith(`${entity}:`)).map(([, row]) => row);
  return {
    campaigns: of('campaign')
      .map((row) => pick(row, CAMPAIGN))
      .sort(byKey('campaign_id')),
    candidates: of('candidate')
      .map((row) => pick(row, CANDIDATE))
      .sort(byKey('candidate_id')),
    credits: of('credits').map((row) => pick(row, CREDITS))[0] ?? null,
  };
}
