// The read model's SQL where both engines read it alike, written once. What differs (placeholders,
// reading an id out of a JSON body, the minute of a timestamp) each engine's read-model.ts gives
// as a `ReadDialect`; this file never asks which engine it runs on.
import type {
  CampaignStatsRow,
  CandidateListQuery,
  CandidateSort,
  EventDetailRow,
  EventSummaryRow,
  HandlerFailureFilter,
  HandlerFailureListRow,
  InboxFilter,
  MatchCount,
  ReadModel,
} from './ports/read-model.js';
import { EVENT_KINDS, RECONCILE_KINDS } from '../events/index.js';
import type { InboxState } from './inbox-state.js';
import { bodyOf } from './bodies.js';
import { identityText } from './identities.js';
import { candidateKeyBytes, candidateOfKey } from './handler-keys.js';
import { instantText, withInstantTexts } from './instants.js';
import { andKeyBlocks } from './engine-sql.js';
import { averageScoreSql, candidatesCounter, counterSql } from './counters.js';
import { CAMPAIGN_COLUMNS, CANDIDATE_COLUMNS, decodeCandidate } from '../tables/rows.js';

export interface ReadDialect {
  /** The driver's placeholder for the `n`th parameter (from 1): `?` for better-sqlite3, `$n` for pg. */
  placeholder(n: number): string;
  /** SQL giving `data.campaign_id` of an accepted inbox body as text, else null. */
  campaignOf: string;
  /** SQL giving `received_at` as its UTC minute, `YYYY-MM-DDTHH:MM`. */
  minuteOf: string;
  /** An ISO 8601 instant as compared with `received_at` (`instants.ts`: Unix ms on SQLite). */
  instant(iso: string): unknown;
  /** What a lookup by handler key ANDs on this engine (`KEY_BLOCKS_SQL` on SQLite), if anything. */
  keyBlocks?: string;
  /**
   * The column as a term the planner will not choose an index by. SQLite keeps no statistics: it
   * takes `account = ?` for a selective term and reads every row of the account through an index
   * led by it (inbox_by_received), then sorts them, where reading the inbox backwards by id would
   * stop at the page's last row. PostgreSQL plans from statistics and needs no hint.
   */
  unindexed(column: string): string;
}

interface Statement {
  text: string;
  values: unknown[];
}

/** Runs a read on the engine; rows with booleans, numbers and ISO text. */
export type RunRead = <R>(statement: Statement) => Promise<R[]>;

/** A statement's parameters as they are bound, each named by the dialect's placeholder. */
class Parameters {
  readonly values: unknown[] = [];
  constructor(private readonly dialect: ReadDialect) {}
  bind(value: unknown): string {
    this.values.push(value);
    return this.dialect.placeholder(this.values.length);
  }
  statement(text: string): Statement {
    return { text, values: this.values };
  }
}

// A campaign's figures are read from the counters (counters.ts), by key: their cost does not grow
// with the campaign's candidates.
const CAMPAIGN_SELECT = `
  SELECT c.campaign_id, ${CAMPAIGN_COLUMNS.map((c) => `c.${c}`).join(', ')},
         ${counterSql(candidatesCounter(), 'c.account', 'c.campaign_id')} AS total_candidates,
         ${counterSql(candidatesCounter('completed'), 'c.account', 'c.campaign_id')} AS interviews_completed,
         ${averageScoreSql('c.account', 'c.campaign_id')} AS average_score
  FROM campaigns c`;

/** A stretch of the campaigns list that campaigns_by_created holds in the list's order. */
interface CampaignRange {
  where: (p: Parameters) => string;
  order: string;
}

const DATED_ORDER = 'c.created_at DESC NULLS LAST, c.campaign_id';
const UNDATED: CampaignRange = { where: () => 'c.created_at IS NULL', order: 'c.campaign_id' };

/**
 * The campaigns list (newest first, the undated last by id) after a campaign, as up to three
 * ranges of campaigns_by_created, each read in the index's order and stopping at the page's end:
 * the cursor's date after its id, the older dates, the undated. The cursor's date is read by SQL,
 * never carried in the link (PostgreSQL keeps microseconds that ISO text with milliseconds drops).
 */
async function campaignRanges(dialect: ReadDialect, run: RunRead, account: string, after: string | undefined): Promise<CampaignRange[]> {
  if (after === undefined) return [{ where: () => 'c.created_at IS NOT NULL', order: DATED_ORDER }, UNDATED];
  const p = new Parameters(dialect);
  const [cursor] = await run<{ undated: boolean | number }>(
    p.statement(
      `SELECT created_at IS NULL AS undated FROM campaigns WHERE account = ${p.bind(account)} AND campaign_id = ${p.bind(after)}`,
    ),
  );
  if (cursor === undefined) return [];
  if (cursor.undated) return [{ where: (q) => `c.created_at IS NULL AND c.campaign_id > ${q.bind(after)}`, order: 'c.campaign_id' }];
  const dateOf = (q: Parameters) =>
    `(SELECT created_at FROM campaigns WHERE account = ${q.bind(account)} AND campaign_id = ${q.bind(after)})`;
  return [
    { where: (q) => `c.created_at = ${dateOf(q)} AND c.campaign_id > ${q.bind(after)}`, order: 'c.campaign_id' },
    { where: (q) => `c.created_at < ${dateOf(q)}`, order: DATED_ORDER },
    UNDATED,
  ];
}

// Date order uses interview_date, falling back to when the candidate was added (docs/projection.md 5).
const DATE = 'COALESCE(interview_date, added_at)';
const CANDIDATE_ORDER: Record<CandidateSort, string> = {
  date_desc: `${DATE} DESC NULLS LAST, candidate_id`,
  date_asc: `${DATE} ASC NULLS LAST, candidate_id`,
  score_desc: `interview_score DESC NULLS LAST, ${DATE} DESC NULLS LAST, candidate_id`,
  score_asc: `interview_score ASC NULLS LAST, ${DATE} DESC NULLS LAST, candidate_id`,
};

function candidateWhere(p: Parameters, account: string, query: CandidateListQuery): string {
  const where = [`account = ${p.bind(account)}`, `campaign_id = ${p.bind(query.campaignId)}`];
  if (query.status !== undefined) where.push(`status = ${p.bind(query.status)}`);
  if (query.minScore !== undefined) where.push(`interview_score >= ${p.bind(query.minScore)}`);
  return where.join(' AND ');
}

// The states a partial index of the inbox holds, led by the account: the rows set aside
// (inbox_set_aside) and the pending ones (inbox_pending).
const SET_ASIDE: readonly InboxState[] = ['unknown', 'dead'];
const STATE_LITERALS: Record<InboxState, string> = { pending: "'pending'", projected: "'projected'", unknown: "'unknown'", dead: "'dead'" };

function byPartialIndex(states: readonly InboxState[]): boolean {
  return states.length > 0 && (states.every((s) => SET_ASIDE.includes(s)) || states.every((s) => s === 'pending'));
}

/**
 * The WHERE clause of an inbox filter, within the account. States are written as literals: SQLite
 * reads a partial index only when the statement's own terms imply the index's WHERE, which a bound
 * parameter does not. The account leads the index only when the filter can use an index led by it
 * (a partial index of its states, a range of received_at, a candidate's handler key); otherwise the
 * inbox is read by id, newest first, and the read stops at the page's end.
 */
function eventWhere(p: Parameters, d: ReadDialect, account: string, filter: InboxFilter): string[] {
  const states = filter.states ?? [];
  const byIndex = servedByIndex(filter);
  const clauses: string[] = [`${byIndex ? 'account' : d.unindexed('account')} = ${p.bind(account)}`];
  if (states.length > 0) clauses.push(`state IN (${states.map((s) => stateLiteral(s)).join(', ')})`);
  if (filter.kind !== undefined) clauses.push(`kind = ${p.bind(filter.kind)}`);
  if (filter.campaign !== undefined) clauses.push(`${d.campaignOf} = ${p.bind(filter.campaign)}`);
  // The handler key names the candidate of every accepted body that has one (set at intake; rows
  // stored before it got theirs in a migration), as erasure and export find them: by the index led
  // by the account, newest first, never by reading bodies.
  if (filter.candidate !== undefined) clauses.push(`handler_key = ${p.bind(candidateKeyBytes(filter.candidate))}${andKeyBlocks(d)}`);
  if (filter.from !== undefined) clauses.push(`received_at >= ${p.bind(d.instant(filter.from))}`);
  if (filter.to !== undefined) clauses.push(`received_at < ${p.bind(d.instant(filter.to))}`);
  if (filter.verdict !== undefined) clauses.push(`verdict = ${p.bind(filter.verdict)}`);
  if (filter.upTo !== undefined) clauses.push(`inbox_id <= ${p.bind(filter.upTo)}`);
  return clauses;
}

function servedByIndex(filter: InboxFilter): boolean {
  return byPartialIndex(filter.states ?? []) || filter.from !== undefined || filter.to !== undefined || filter.candidate !== undefined;
}

/**
 * Whether a filter is read by going through the inbox by id, testing each row (a kind, a campaign,
 * a verdict, the projected state): no index serves it, so a page of it is searched within a window
 * of ids (query/inbox.ts) rather than until it fills, which could mean the whole inbox.
 */
export function searchesInbox(filter: InboxFilter): boolean {
  const terms =
    filter.kind !== undefined || filter.campaign !== undefined || filter.verdict !== undefined || (filter.states ?? []).length > 0;
  return terms && !servedByIndex(filter);
}

function failureWhere(p: Parameters, account: string, filter: HandlerFailureFilter): string {
  const clauses: string[] = [`f.account = ${p.bind(account)}`];
  if (filter.handler !== undefined) clauses.push(`f.handler = ${p.bind(filter.handler)}`);
  if (filter.kind !== undefined) clauses.push(`i.kind = ${p.bind(filter.kind)}`);
  if (filter.upTo !== undefined) clauses.push(`f.failure_id <= ${p.bind(filter.upTo)}`);
  return all(clauses);
}

function stateLiteral(state: InboxState): string {
  const literal = STATE_LITERALS[state];
  if (literal === undefined) throw new TypeError(`not an inbox state: ${String(state)}`);
  return literal;
}

const all = (clauses: readonly string[]): string => (clauses.length === 0 ? 'TRUE' : clauses.join(' AND '));

function matchCount(row: { count: number; up_to: number | null } | undefined): MatchCount {
  return { count: Number(row!.count), upTo: row!.up_to === null ? null : Number(row!.up_to) };
}

/**
 * The read model of one account on an engine: its dialect, and how it runs a read. Every statement
 * binds the account and reads that account's rows only (docs/projection.md section 9).
 */
export function createReadModel(dialect: ReadDialect, run: RunRead, account: string): ReadModel {
  return { ...projectedReads(dialect, run, account), ...inboxReads(dialect, run, account), ...failureReads(dialect, run, account) };
}

/** How many candidates a list matches: from the counters, unless a minimum score filters them (then counted, within the campaign). */
function candidatesCount(dialect: ReadDialect, account: string, query: CandidateListQuery): Statement {
  const p = new Parameters(dialect);
  if (query.minScore !== undefined)
    return p.statement(`SELECT COUNT(*) AS total FROM candidates WHERE ${candidateWhere(p, account, query)}`);
  return p.statement(`SELECT ${counterSql(candidatesCounter(query.status), p.bind(account), p.bind(query.campaignId))} AS total`);
}

function projectedReads(dialect: ReadDialect, run: RunRead, account: string): Pick<ReadModel, 'campaign' | 'campaigns' | 'listCandidates'> {
  return {
    async campaign(campaignId) {
      const p = new Parameters(dialect);
      const [row] = await run<CampaignStatsRow>(
        p.statement(`${CAMPAIGN_SELECT} WHERE c.account = ${p.bind(account)} AND c.campaign_id = ${p.bind(campaignId)}`),
      );
      return row;
    },
    async campaigns({ after, limit }) {
      const rows: CampaignStatsRow[] = [];
      for (const range of await campaignRanges(dialect, run, account, after)) {
        if (rows.length >= limit) break;
        const p = new Parameters(dialect);
        const where = `c.account = ${p.bind(account)} AND ${range.where(p)}`; // bound in the order written, as SQLite's ? are
        rows.push(
          ...(await run<CampaignStatsRow>(
            p.statement(`${CAMPAIGN_SELECT} WHERE ${where} ORDER BY ${range.order} LIMIT ${p.bind(limit - rows.length)}`),
          )),
        );
      }
      return rows;
    },
    async listCandidates(query) {
      const [counted] = await run<{ total: number }>(candidatesCount(dialect, account, query));
      const p = new Parameters(dialect);
      const where = candidateWhere(p, account, query);
      const found = await run<Record<string, unknown>>(
        p.statement(
          `SELECT candidate_id, ${CANDIDATE_COLUMNS.join(', ')} FROM candidates WHERE ${where}
           ORDER BY ${CANDIDATE_ORDER[query.sort]} LIMIT ${p.bind(query.limit)} OFFSET ${p.bind(query.offset)}`,
        ),
      );
      return { total: Number(counted!.total), candidates: found.map(decodeCandidate) };
    },
  };
}

/** The list of the inbox's events, newest first. */
function eventList(d: ReadDialect, run: RunRead, account: string): ReadModel['listEvents'] {
  return async (filter, page) => {
    const p = new Parameters(d);
    const where = eventWhere(p, d, account, filter);
    if (page.before !== undefined) where.push(`inbox_id < ${p.bind(page.before)}`);
    if (page.since !== undefined) where.push(`inbox_id >= ${p.bind(page.since)}`);
    const rows = await run<Omit<EventSummaryRow, 'candidate_id'> & { handler_key: unknown }>(
      p.statement(
        `SELECT inbox_id, received_at, kind, state, verdict, attempts, processed_at, reasons, ${d.campaignOf} AS campaign_id, handler_key
         FROM inbox WHERE ${all(where)} ORDER BY inbox_id DESC LIMIT ${p.bind(page.limit)}`,
      ),
    );
    // `data.candidate_id` of an accepted body: its handler key names it (`subjectKey`, set at
    // intake, and for older rows by a migration), so no body is read.
    return rows.map(({ handler_key: key, ...row }) => ({
      ...withInstantTexts(row),
      candidate_id: row.verdict === 'accepted' ? candidateOfKey(key) : null,
    }));
  };
}

type InboxReads = 'listEvents' | 'countEvents' | 'eventIds' | 'event' | 'newestEventId' | 'eventsPerMinute' | 'oldestPending' | 'kinds';

function inboxReads(d: ReadDialect, run: RunRead, account: string): Pick<ReadModel, InboxReads> {
  return {
    listEvents: eventList(d, run, account),
    async countEvents(filter) {
      const p = new Parameters(d);
      const where = all(eventWhere(p, d, account, filter));
      const [row] = await run<{ count: number; up_to: number | null }>(
        p.statement(`SELECT COUNT(*) AS count, MAX(inbox_id) AS up_to FROM inbox WHERE ${where}`),
      );
      return matchCount(row);
    },
    async eventIds(filter, limit) {
      const p = new Parameters(d);
      const where = all(eventWhere(p, d, account, filter));
      const rows = await run<{ inbox_id: number }>(
        p.statement(`SELECT inbox_id FROM inbox WHERE ${where} ORDER BY inbox_id LIMIT ${p.bind(limit)}`),
      );
      return rows.map((r) => Number(r.inbox_id));
    },
    async event(inboxId) {
      const p = new Parameters(d);
      const [row] = await run<EventDetailRow & { codec: number | null }>(
        p.statement(
          `SELECT inbox_id, received_at, kind, state, verdict, attempts, processed_at, raw, codec, identity, secret_id, reasons FROM inbox
           WHERE account = ${p.bind(account)} AND inbox_id = ${p.bind(inboxId)}`,
        ),
      );
      if (row === undefined) return undefined;
      const { codec, ...detail } = row;
      return { ...withInstantTexts(detail), raw: bodyOf(codec, detail.raw), identity: identityText(detail.identity) };
    },
    async newestEventId() {
      const [row] = await run<{ id: number | null }>(new Parameters(d).statement('SELECT MAX(inbox_id) AS id FROM inbox'));
      return row?.id === null || row?.id === undefined ? null : Number(row.id);
    },
    async eventsPerMinute(since) {
      const p = new Parameters(d);
      const rows = await run<{ minute: string; count: number }>(
        p.statement(
          `SELECT ${d.minuteOf} AS minute, COUNT(*) AS count FROM inbox WHERE account = ${p.bind(account)} AND received_at >= ${p.bind(d.instant(since))} GROUP BY ${d.minuteOf}`,
        ),
      );
      return rows.map((r) => ({ minute: r.minute, count: Number(r.count) }));
    },
    async oldestPending() {
      const p = new Parameters(d);
      const [row] = await run<{ oldest: unknown }>(
        // By the index of pending rows, not by the account's (see `unindexed`).
        p.statement(
          `SELECT MIN(received_at) AS oldest FROM inbox WHERE ${d.unindexed('account')} = ${p.bind(account)} AND state = 'pending'`,
        ),
      );
      return instantText(row?.oldest);
    },
    async kinds() {
      // Every kind the service sends or reconciliation writes can be chosen; the others are found
      // among the rows set aside, by their index. The kinds of the whole inbox cost a scan of it.
      const p = new Parameters(d);
      const rows = await run<{ kind: string }>(
        p.statement(
          `SELECT DISTINCT kind FROM inbox WHERE account = ${p.bind(account)} AND state IN ('unknown', 'dead') AND kind IS NOT NULL`,
        ),
      );
      return [...new Set<string>([...EVENT_KINDS, ...RECONCILE_KINDS, ...rows.map((r) => r.kind)])].sort();
    },
  };
}

function failureReads(d: ReadDialect, run: RunRead, account: string): Pick<ReadModel, 'handlerFailures' | 'countHandlerFailures'> {
  return {
    async handlerFailures(filter, limit) {
      const p = new Parameters(d);
      const where = failureWhere(p, account, filter);
      const rows = await run<HandlerFailureListRow>(
        p.statement(
          `SELECT f.failure_id, f.inbox_id, i.kind, f.handler, f.error, f.attempts, f.failed_at
           FROM handler_failures f JOIN inbox i ON i.inbox_id = f.inbox_id AND i.account = f.account WHERE ${where} ORDER BY f.failure_id DESC LIMIT ${p.bind(limit)}`,
        ),
      );
      return rows.map((r) => ({ ...r, failure_id: Number(r.failure_id), inbox_id: Number(r.inbox_id) }));
    },
    async countHandlerFailures(filter) {
      const p = new Parameters(d);
      const where = failureWhere(p, account, filter);
      const [row] = await run<{ count: number; up_to: number | null }>(
        p.statement(
          `SELECT COUNT(*) AS count, MAX(f.failure_id) AS up_to FROM handler_failures f JOIN inbox i ON i.inbox_id = f.inbox_id AND i.account = f.account WHERE ${where}`,
        ),
      );
      return matchCount(row);
    },
  };
}
