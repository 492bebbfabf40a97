// What the console reads and does, as a receiver offers it. The console only goes through these:
// the query API for reads, the dead-letter API for actions, each for the account of the page.
import type { Request } from 'express';
import type { AccountSummary } from '../accounts/registry.js';
import type { DeadLetters } from '../dispatch/dead-letters.js';
import { prepareInboxQueries, type InboxQueries, type Queries } from '../query/index.js';
import { DEFAULT_ACCOUNT } from '../receive/account.js';
import type { CandidateMatch, ReadinessProbe } from '../store/rows.js';
import type { InboxState } from '../store/inbox-state.js';
import type { StoreHandle } from '../store/handle.js';
import { storePorts } from '../store/store.js';
import type { Store } from '../store/store.js';
import type { CandidateExport, EraseOptions, ErasureReport } from '../privacy/index.js';
import type { AccountChoice, PageContext } from './html.js';

/** What the console does for one account: a receiver's `AccountReceiver` members. */
interface AccountSource {
  query: Queries;
  deadLetters: DeadLetters;
  erase(match: CandidateMatch, options: EraseOptions): Promise<ErasureReport>;
  exportCandidate(candidateId: string): Promise<CandidateExport>;
  counts(): Promise<Record<InboxState, number> & { handler_failures: number }>;
}

/** The receiver as the console sees it: the default account's members, and the way to the others. */
export interface DashboardSource extends AccountSource {
  store(): Promise<StoreHandle>;
  probe(): Promise<ReadinessProbe>;
  /** Verified requests by secret fingerprint since the process started (a receiver has it). */
  secretUse?(account?: string): Promise<Array<{ fingerprint: string; requests: number }>>;
  /** Another account's members (a receiver has it). */
  forAccount?(account: string): AccountSource;
  /** The accounts registry; undefined (or absent) when the receiver serves the default account only. */
  accounts?(): Promise<{ list(): Promise<AccountSummary[]> } | undefined>;
}

/** One account's reads and actions, and the reads of its store the pages make themselves (the inbox, the erasures). */
export interface ScopedSource extends AccountSource {
  readonly account: string;
  store(): Promise<Pick<Store, 'readModel' | 'people' | 'featureSql' | 'forAccount'>>;
  probe(): Promise<ReadinessProbe>;
  secretUse(): Promise<Array<{ fingerprint: string; requests: number }>>;
}

/** One account's console reads, with the inbox queries on its store once it is open. */
export interface ConsoleData {
  source: ScopedSource;
  inbox(): Promise<InboxQueries>;
  /** The page context of a request (mount points, account, CSRF token unless read-only, reveal unless read-only). */
  context(req: Request): PageContext;
}

/** The source of one account: the receiver's own members for the default account, `forAccount`'s for another. */
export function scopedSource(source: DashboardSource, account: string): ScopedSource {
  // Asked at each use: an account removed since its pages were first shown is then refused
  // (UnknownAccountError, a 404), and one added by another process a moment ago is found.
  const own = () => (account === DEFAULT_ACCOUNT || source.forAccount === undefined ? source : source.forAccount(account));
  return {
    account,
    get query() {
      return own().query;
    },
    get deadLetters() {
      return own().deadLetters;
    },
    erase: (match, options) => own().erase(match, options),
    exportCandidate: (candidateId) => own().exportCandidate(candidateId),
    counts: () => own().counts(),
    store: async () => storePorts(await source.store()).forAccount(account),
    probe: () => source.probe(),
    secretUse: async () => (await source.secretUse?.(account)) ?? [],
  };
}

/** What a request was resolved to before its page runs (set by the account resolver). */
interface RequestAccounts {
  /** Where the console is mounted, without an account prefix. */
  root: string;
  accounts: AccountChoice[];
}

const resolved = new WeakMap<Request, RequestAccounts>();
const roots = new WeakMap<Request, string>();

/** Notes where the console is mounted, before a router for an account's path changes `req.baseUrl`. */
export function noteRoot(req: Request): void {
  roots.set(req, req.baseUrl);
}

export function rootOf(req: Request): string {
  return roots.get(req) ?? req.baseUrl;
}

export function setRequestAccounts(req: Request, accounts: AccountChoice[]): void {
  resolved.set(req, { root: rootOf(req), accounts });
}

function requestAccounts(req: Request): RequestAccounts {
  return resolved.get(req) ?? { root: rootOf(req), accounts: [{ account: DEFAULT_ACCOUNT, name: null, state: 'active' }] };
}

export function consoleData(source: ScopedSource, csrf: string | undefined): ConsoleData {
  let inbox: Promise<InboxQueries> | undefined;
  return {
    source,
    inbox: () => (inbox ??= source.store().then(prepareInboxQueries)),
    // A read-only console never reveals personal data, whatever the query asks.
    context: (req) => ({
      base: req.baseUrl,
      ...requestAccounts(req),
      account: source.account,
      csrf,
      reveal: csrf !== undefined && req.query.reveal === '1',
      page: req.path,
    }),
  };
}

/** A query-string parameter as one string (the first, when repeated), or undefined. */
export function param(req: Request, name: string): string | undefined {
  const value = req.query[name];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first !== '' ? first : undefined;
}

/** A positive integer parameter (route or query), or undefined. */
export function idParam(value: unknown): number | undefined {
  const text: unknown = Array.isArray(value) ? value[0] : value;
  return typeof text === 'string' && /^\d{1,15}$/.test(text) ? Number(text) : undefined;
}
