// What the console reads and does, as a receiver offers it. The console only goes through these:
// the query API for reads, the dead-letter API for actions.
import type { Request } from 'express';
import type { DeadLetters } from '../dispatch/dead-letters.js';
import { prepareInboxQueries, type InboxQueries, type Queries } from '../query/index.js';
import type { CandidateMatch, InboxState, ReadinessProbe, Store } from '../store/store.js';
import type { CandidateExport, EraseOptions, ErasureReport } from '../privacy/index.js';
import type { PageContext } from './html.js';

export interface DashboardSource {
  store(): Promise<Store>;
  probe(): Promise<ReadinessProbe>;
  counts(): Promise<Record<InboxState, number> & { handler_failures: number }>;
  query: Queries;
  deadLetters: DeadLetters;
  erase(match: CandidateMatch, options: EraseOptions): Promise<ErasureReport>;
  exportCandidate(candidateId: string): Promise<CandidateExport>;
  /** Verified requests by secret fingerprint since the process started (a receiver has it). */
  secretUse?(): Promise<Array<{ fingerprint: string; requests: number }>>;
}

/** The receiver's reads, with the inbox queries on its store once it is open. */
export interface ConsoleData {
  source: DashboardSource;
  inbox(): Promise<InboxQueries>;
  /** The page context of a request (mount point, CSRF token unless read-only, reveal unless read-only). */
  context(req: Request): PageContext;
}

export function consoleData(source: DashboardSource, csrf: string | undefined): ConsoleData {
  let inbox: Promise<InboxQueries> | undefined;
  return {
    source,
    inbox: () => (inbox ??= source.store().then(prepareInboxQueries)),
    // A read-only console never reveals personal data, whatever the query asks.
    context: (req) => ({ base: req.baseUrl, csrf, reveal: csrf !== undefined && req.query.reveal === '1' }),
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
