// Reads of the inbox for the operator console: what arrived, in which state, about whom. This
// file validates the filters and shapes the rows; the SQL is the store's read model, in each
// engine's dialect. The campaign and candidate filters read an accepted body's `data`, so a body
// that is not JSON never breaks a listing.
import type { Issue } from '../events/index.js';
import type { EventDetailRow, EventSummaryRow, HandlerFailureFilter, InboxFilter, ReadModel } from '../store/ports/read-model.js';
import { searchesInbox } from '../store/read-model-sql.js';
import type { InboxState } from '../store/inbox-state.js';
import type { Store } from '../store/store.js';
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

export interface EventSummary extends Omit<EventSummaryRow, 'reasons'> {
  /** Why the row was set aside (unknown and dead rows); empty otherwise. */
  reasons: Issue[];
}

export interface EventPage {
  events: EventSummary[];
  /** The `before` of the next (older) page; null on the last one. */
  next: number | null;
  /**
   * The inbox ids this page searched, when its filter has no index to read (a kind, a campaign, a
   * verdict, the projected state: each row is tested): at most 10,000 ids a page, so that a page
   * costs the same on any inbox. A page may then hold fewer rows than asked, or none, and still
   * have a `next` that searches on. Null when an index served the filter, or there was none.
   */
  searched: { from: number; to: number } | null;
}

/** How many inbox ids a page of a filter that no index serves searches (about 20 ms on SQLite). */
const SEARCH_WINDOW = 10_000;

export interface EventDetail extends Omit<EventDetailRow, 'raw' | 'reasons'> {
  /** The body as received, as UTF-8 text. */
  raw: string;
  reasons: Issue[];
}

export type { HandlerFailureFilter };

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

const given = (value: string | undefined): string | undefined => (value === undefined || value === '' ? undefined : value);

/** An event filter checked and normalised (empty text is no filter): what the read model takes. */
function inboxFilter(filter: EventFilter): InboxFilter {
  const wanted = states(filter.state);
  const from = given(filter.from);
  const to = given(filter.to);
  return {
    kind: given(filter.kind),
    states: wanted,
    campaign: given(filter.campaign),
    candidate: given(filter.candidate),
    from: from === undefined ? undefined : instant('from', from),
    to: to === undefined ? undefined : instant('to', to),
    verdict: given(filter.verdict),
    upTo: filter.upTo,
  };
}

function failureFilter(filter: HandlerFailureFilter): HandlerFailureFilter {
  return { handler: given(filter.handler), kind: given(filter.kind), upTo: filter.upTo };
}

const issues = (reasons: string | null): Issue[] => (reasons === null ? [] : (JSON.parse(reasons) as Issue[]));

/** The inbox's queries on one store (SQLite or PostgreSQL): the console's and the CLI's reads. */
export function prepareInboxQueries(store: Pick<Store, 'readModel'>, { searchWindow = SEARCH_WINDOW }: { searchWindow?: number } = {}) {
  const reads = store.readModel;
  return {
    listEvents: (parameters: EventListParameters = {}) => listEvents(reads, parameters, searchWindow),
    /** How many rows match, and the newest id among them (a bulk action's preview). */
    countEvents: (filter: EventFilter = {}) => reads.countEvents(inboxFilter(filter)),
    /** The inbox ids that match, oldest first (what a bulk reprocess acts on). */
    eventIds: (filter: EventFilter, limit: number) => reads.eventIds(inboxFilter(filter), limit),
    getEvent: (inboxId: number) => getEvent(reads, inboxId),
    eventsPerMinute: (minutes = 60, now = Date.now()) => eventsPerMinute(reads, minutes, now),
    /** When the oldest pending row was received (the projection's lag); null when none waits. */
    oldestPending: () => reads.oldestPending(),
    /** The kinds a filter can choose: the service's, reconciliation's, and those of the rows set aside. */
    kinds: () => reads.kinds(),
    /** Handler failures, newest first, with their event's kind. */
    handlerFailures: (filter: HandlerFailureFilter = {}, limit = 100) => reads.handlerFailures(failureFilter(filter), limit),
    /** How many handler failures match, and the newest id among them (a bulk retry's preview). */
    countHandlerFailures: (filter: HandlerFailureFilter = {}) => reads.countHandlerFailures(failureFilter(filter)),
  };
}

/**
 * Inbox rows, newest first, filtered; `before` pages on to older rows. A filter that no index
 * serves is searched `window` ids at a time, below `before` (or the newest id).
 */
async function listEvents(reads: ReadModel, parameters: EventListParameters, window: number): Promise<EventPage> {
  const limit = parameters.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new QueryParameterError('limit', 'an integer from 1 to 500');
  const filter = inboxFilter(parameters);
  let searched: EventPage['searched'] = null;
  if (searchesInbox(filter)) {
    const to = parameters.before !== undefined ? parameters.before - 1 : await reads.newestEventId();
    if (to === null || to < 1) return { events: [], next: null, searched: null };
    searched = { from: Math.max(1, to - window + 1), to };
  }
  // One row more than asked: whether there is a next page.
  const rows = await reads.listEvents(filter, { before: parameters.before, since: searched?.from, limit: limit + 1 });
  const events = rows.slice(0, limit).map((row) => ({ ...row, reasons: issues(row.reasons) }));
  if (rows.length > limit) return { events, next: events[events.length - 1]!.inbox_id, searched };
  return { events, next: searched !== null && searched.from > 1 ? searched.from : null, searched };
}

/** One inbox row: the body as received, how it was verified and processed. */
async function getEvent(reads: ReadModel, inboxId: number): Promise<EventDetail | undefined> {
  const row = await reads.event(inboxId);
  if (row === undefined) return undefined;
  return { ...row, raw: Buffer.from(row.raw).toString('utf8'), reasons: issues(row.reasons) };
}

/**
 * Rows received per minute over the last `minutes` (UTC minute starts, ISO), every minute
 * present, zeros included, oldest first.
 */
async function eventsPerMinute(reads: ReadModel, minutes = 60, now = Date.now()): Promise<Array<{ minute: string; count: number }>> {
  const end = Math.floor(now / 60_000) * 60_000;
  const start = end - (minutes - 1) * 60_000;
  const rows = await reads.eventsPerMinute(new Date(start).toISOString());
  const counted = new Map(rows.map((r) => [r.minute, r.count]));
  return Array.from({ length: minutes }, (_, i) => {
    const minute = new Date(start + i * 60_000).toISOString();
    return { minute, count: counted.get(minute.slice(0, 16)) ?? 0 };
  });
}

export type InboxQueries = ReturnType<typeof prepareInboxQueries>;
