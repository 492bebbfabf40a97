// Reads of the inbox for the operator console: what arrived, in which state, about whom. Through
// `store.select` like every other query, on either engine. The inbox keeps the raw body, not its
// campaign or candidate, so those filters read the body as JSON: only accepted rows (valid UTF-8
// JSON envelopes by construction), so a body that is not JSON never breaks a listing.
import type { Issue } from '../events/index.js';
import type { InboxState, Store } from '../store/store.js';
import { QueryParameterError } from './errors.js';

export const INBOX_STATES = ['pending', 'projected', 'unknown', 'dead'] as const satisfies readonly InboxState[];

export interface EventFilter {
  kind?: string;
  /** One state or several (dead letters are `['unknown', 'dead']`). */
  state?: InboxState | readonly InboxState[];
  campaign?: string;
  candidate?: string;
  /** Received at or after this instant (ISO 8601). */
  from?: string;
  /** Received before this instant (ISO 8601). */
  to?: string;
  /** `accepted` (JSON envelopes: what reprocessing can act on), `invalid_json` or `invalid_envelope`. */
  verdict?: string;
  /** Only rows with an inbox id up to this one (a bulk action acts on what its preview counted). */
  upTo?: number;
}

export interface EventListParameters extends EventFilter {
  /** The cursor: rows older than this inbox id. */
  before?: number;
  /** 1 to 500, default 50. */
  limit?: number;
}

export interface EventSummary {
  inbox_id: number;
  received_at: string;
  kind: string | null;
  state: InboxState;
  verdict: string;
  attempts: number;
  processed_at: string | null;
  campaign_id: string | null;
  candidate_id: string | null;
  /** Why the row was set aside (unknown and dead rows); empty otherwise. */
  reasons: Issue[];
}

export interface EventPage {
  events: EventSummary[];
  /** The `before` of the next (older) page; null on the last one. */
  next: number | null;
}

export interface EventDetail extends Omit<EventSummary, 'campaign_id' | 'candidate_id' | 'reasons'> {
  /** The body as received, as UTF-8 text. */
  raw: string;
  identity: string | null;
  /** Fingerprint of the secret that matched; null when unsigned. */
  secret_id: string | null;
  reasons: Issue[];
}

export interface HandlerFailureFilter {
  handler?: string;
  kind?: string;
  /** Only failures with an id up to this one. */
  upTo?: number;
}

export interface HandlerFailure {
  failure_id: number;
  inbox_id: number;
  kind: string | null;
  handler: string;
  error: string;
  attempts: number;
  failed_at: string;
}

type Dialect = 'sqlite' | 'postgres';

/** A member of `data` in an accepted body, as text (null for other rows, or when absent). */
function dataField(dialect: Dialect, field: 'campaign_id' | 'candidate_id'): string {
  return dialect === 'sqlite'
    ? `CASE WHEN verdict = 'accepted' AND json_valid(CAST(raw AS TEXT)) THEN CAST(json_extract(CAST(raw AS TEXT), '$.data.${field}') AS TEXT) END`
    : // PostgreSQL cannot hold a NUL in text, and its JSON parser runs out of stack on deep
      // nesting (valid JSON the intake accepts): either would fail the whole listing, so such a
      // body (a NUL escape, or 1,000 brackets and more) gives null, not filterable, instead.
      `CASE WHEN verdict = 'accepted' AND strpos(convert_from(raw, 'UTF8'), '\\u0000') = 0
         AND length(convert_from(raw, 'UTF8')) - length(translate(convert_from(raw, 'UTF8'), '[{', '')) < 1000
       THEN (convert_from(raw, 'UTF8')::json -> 'data' ->> '${field}') END`;
}

/** An ISO instant as the inbox stores it (UTC, milliseconds), or a QueryParameterError. */
function instant(name: string, value: string): string {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new QueryParameterError(name, `not a date or time: "${value}"`);
  return date.toISOString();
}

function states(state: EventFilter['state']): InboxState[] {
  const list = state === undefined ? [] : typeof state === 'string' ? [state] : [...state];
  for (const s of list)
    if (!(INBOX_STATES as readonly string[]).includes(s)) throw new QueryParameterError('state', `one of ${INBOX_STATES.join(', ')}`);
  return list;
}

/** What every inbox query needs: the store, its SQL dialect, and how to read a body's ids. */
interface InboxSql {
  store: Store;
  dialect: Dialect;
  campaignOf: string;
  candidateOf: string;
}

/** The inbox's queries on one store (SQLite or PostgreSQL): the console's and the CLI's reads. */
export function prepareInboxQueries(store: Store) {
  const dialect: Dialect = store.location.startsWith('sqlite:') ? 'sqlite' : 'postgres';
  const q: InboxSql = { store, dialect, campaignOf: dataField(dialect, 'campaign_id'), candidateOf: dataField(dialect, 'candidate_id') };
  return {
    listEvents: (parameters: EventListParameters = {}) => listEvents(q, parameters),
    countEvents: (filter: EventFilter = {}) => countEvents(q, filter),
    eventIds: (filter: EventFilter, limit: number) => eventIds(q, filter, limit),
    getEvent: (inboxId: number) => getEvent(q, inboxId),
    eventsPerMinute: (minutes = 60, now = Date.now()) => eventsPerMinute(q, minutes, now),
    oldestPending: () => oldestPending(q),
    kinds: () => kinds(q),
    handlerFailures: (filter: HandlerFailureFilter = {}, limit = 100) => handlerFailures(q, filter, limit),
    countHandlerFailures: (filter: HandlerFailureFilter = {}) => countHandlerFailures(q, filter),
  };
}

/** The WHERE clause of an event filter, with its values. */
function eventWhere(q: InboxSql, filter: EventFilter): { sql: string; values: unknown[] } {
  const clauses: string[] = [];
  const values: unknown[] = [];
  if (filter.kind !== undefined && filter.kind !== '') {
    clauses.push('kind = ?');
    values.push(filter.kind);
  }
  const wanted = states(filter.state);
  if (wanted.length > 0) {
    clauses.push(`state IN (${wanted.map(() => '?').join(', ')})`);
    values.push(...wanted);
  }
  if (filter.campaign !== undefined && filter.campaign !== '') {
    clauses.push(`${q.campaignOf} = ?`);
    values.push(filter.campaign);
  }
  if (filter.candidate !== undefined && filter.candidate !== '') {
    // The handler key (migration 006) names the candidate without reading the body; rows
    // stored before it have none, and are read as JSON.
    clauses.push(`(handler_key = ? OR (handler_key IS NULL AND ${q.candidateOf} = ?))`);
    values.push(`candidate:${filter.candidate}`, filter.candidate);
  }
  if (filter.from !== undefined && filter.from !== '') {
    clauses.push('received_at >= ?');
    values.push(instant('from', filter.from));
  }
  if (filter.to !== undefined && filter.to !== '') {
    clauses.push('received_at < ?');
    values.push(instant('to', filter.to));
  }
  if (filter.verdict !== undefined && filter.verdict !== '') {
    clauses.push('verdict = ?');
    values.push(filter.verdict);
  }
  if (filter.upTo !== undefined) {
    clauses.push('inbox_id <= ?');
    values.push(filter.upTo);
  }
  return { sql: clauses.length === 0 ? 'TRUE' : clauses.join(' AND '), values };
}

/** Inbox rows, newest first, filtered; `before` pages on to older rows. */
async function listEvents(q: InboxSql, parameters: EventListParameters = {}): Promise<EventPage> {
  const limit = parameters.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new QueryParameterError('limit', 'an integer from 1 to 500');
  const filter = eventWhere(q, parameters);
  const values = [...filter.values];
  let sql = filter.sql;
  if (parameters.before !== undefined) {
    sql += ' AND inbox_id < ?';
    values.push(parameters.before);
  }
  const rows = await q.store.select<Omit<EventSummary, 'reasons'> & { reasons: string | null }>(
    `SELECT inbox_id, received_at, kind, state, verdict, attempts, processed_at, reasons, ${q.campaignOf} AS campaign_id, ${q.candidateOf} AS candidate_id
     FROM inbox WHERE ${sql} ORDER BY inbox_id DESC LIMIT ?`,
    [...values, limit + 1],
  );
  const events = rows.slice(0, limit).map((row) => ({ ...row, reasons: row.reasons === null ? [] : (JSON.parse(row.reasons) as Issue[]) }));
  return { events, next: rows.length > limit ? events[events.length - 1]!.inbox_id : null };
}

/** How many rows match (a bulk action's preview). */
async function countEvents(q: InboxSql, filter: EventFilter = {}): Promise<{ count: number; upTo: number | null }> {
  const { sql, values } = eventWhere(q, filter);
  const [row] = await q.store.select<{ count: number; up_to: number | null }>(
    `SELECT COUNT(*) AS count, MAX(inbox_id) AS up_to FROM inbox WHERE ${sql}`,
    values,
  );
  return { count: Number(row!.count), upTo: row!.up_to === null ? null : Number(row!.up_to) };
}

/** The inbox ids that match, oldest first (what a bulk reprocess acts on). */
async function eventIds(q: InboxSql, filter: EventFilter, limit: number): Promise<number[]> {
  const { sql, values } = eventWhere(q, filter);
  return (
    await q.store.select<{ inbox_id: number }>(`SELECT inbox_id FROM inbox WHERE ${sql} ORDER BY inbox_id LIMIT ?`, [...values, limit])
  ).map((r) => Number(r.inbox_id));
}

/** One inbox row: the body as received, how it was verified and processed. */
async function getEvent(q: InboxSql, inboxId: number): Promise<EventDetail | undefined> {
  const [row] = await q.store.select<Omit<EventDetail, 'raw' | 'reasons'> & { raw: Uint8Array; reasons: string | null }>(
    `SELECT inbox_id, received_at, kind, state, verdict, attempts, processed_at, raw, identity, secret_id, reasons FROM inbox WHERE inbox_id = ?`,
    [inboxId],
  );
  if (row === undefined) return undefined;
  return { ...row, raw: Buffer.from(row.raw).toString('utf8'), reasons: row.reasons === null ? [] : (JSON.parse(row.reasons) as Issue[]) };
}

/**
 * Rows received per minute over the last `minutes` (UTC minute starts, ISO), every minute
 * present, zeros included, oldest first.
 */
async function eventsPerMinute(q: InboxSql, minutes = 60, now = Date.now()): Promise<Array<{ minute: string; count: number }>> {
  const end = Math.floor(now / 60_000) * 60_000;
  const start = end - (minutes - 1) * 60_000;
  const bucket = q.dialect === 'sqlite' ? 'substr(received_at, 1, 16)' : `to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI')`;
  const rows = await q.store.select<{ minute: string; count: number }>(
    `SELECT ${bucket} AS minute, COUNT(*) AS count FROM inbox WHERE received_at >= ? GROUP BY ${bucket}`,
    [new Date(start).toISOString()],
  );
  const counted = new Map(rows.map((r) => [r.minute, Number(r.count)]));
  return Array.from({ length: minutes }, (_, i) => {
    const minute = new Date(start + i * 60_000).toISOString();
    return { minute, count: counted.get(minute.slice(0, 16)) ?? 0 };
  });
}

/** When the oldest pending row was received (the projection's lag); null when none waits. */
async function oldestPending(q: InboxSql): Promise<string | null> {
  const [row] = await q.store.select<{ oldest: string | null }>(`SELECT MIN(received_at) AS oldest FROM inbox WHERE state = 'pending'`);
  return row?.oldest ?? null;
}

/** The kinds seen in the inbox, for filter choices. */
async function kinds(q: InboxSql): Promise<string[]> {
  return (await q.store.select<{ kind: string }>('SELECT DISTINCT kind FROM inbox WHERE kind IS NOT NULL ORDER BY kind')).map(
    (r) => r.kind,
  );
}

/** Handler failures, newest first, with their event's kind. */
async function handlerFailures(q: InboxSql, filter: HandlerFailureFilter = {}, limit = 100): Promise<HandlerFailure[]> {
  const { sql, values } = failureWhere(filter);
  const rows = await q.store.select<HandlerFailure>(
    `SELECT f.failure_id, f.inbox_id, i.kind, f.handler, f.error, f.attempts, f.failed_at
     FROM handler_failures f JOIN inbox i ON i.inbox_id = f.inbox_id WHERE ${sql} ORDER BY f.failure_id DESC LIMIT ?`,
    [...values, limit],
  );
  return rows.map((r) => ({ ...r, failure_id: Number(r.failure_id), inbox_id: Number(r.inbox_id) }));
}

/** How many handler failures match, and the newest id among them (a bulk retry's preview). */
async function countHandlerFailures(q: InboxSql, filter: HandlerFailureFilter = {}): Promise<{ count: number; upTo: number | null }> {
  const { sql, values } = failureWhere(filter);
  const [row] = await q.store.select<{ count: number; up_to: number | null }>(
    `SELECT COUNT(*) AS count, MAX(f.failure_id) AS up_to FROM handler_failures f JOIN inbox i ON i.inbox_id = f.inbox_id WHERE ${sql}`,
    values,
  );
  return { count: Number(row!.count), upTo: row!.up_to === null ? null : Number(row!.up_to) };
}

function failureWhere(filter: HandlerFailureFilter): { sql: string; values: unknown[] } {
  const clauses: string[] = [];
  const values: unknown[] = [];
  if (filter.handler !== undefined && filter.handler !== '') {
    clauses.push('f.handler = ?');
    values.push(filter.handler);
  }
  if (filter.kind !== undefined && filter.kind !== '') {
    clauses.push('i.kind = ?');
    values.push(filter.kind);
  }
  if (filter.upTo !== undefined) {
    clauses.push('f.failure_id <= ?');
    values.push(filter.upTo);
  }
  return { sql: clauses.length === 0 ? 'TRUE' : clauses.join(' AND '), values };
}

export type InboxQueries = ReturnType<typeof prepareInboxQueries>;
