// Erasing a person (GDPR article 17, PROJECTION.md section 8): one transaction on either engine,
// then nothing of what was erased left where the engine can reach it.
import type { CandidateMatch, Store } from '../store/store.js';

/** A request the erasure refuses before touching anything: no reason, or no one named. */
export class ErasureRequestError extends Error {
  override name = 'ErasureRequestError';
}

/** No candidate matches: nothing was changed. The message never repeats an e-mail or a phone. */
export class UnknownCandidateError extends Error {
  override name = 'UnknownCandidateError';
}

/** What an erasure did: ids and counts, never the erased values. */
export interface ErasureReport {
  candidateId: string;
  /** When it ran (UTC, ISO 8601 with milliseconds): later events dated at or before it change nothing. */
  erasedAt: string;
  eventsRedacted: number;
  /** Whether the erased bytes are gone from the engine's files (SQLite: the WAL was emptied). */
  scrubbed: boolean;
}

export interface EraseOptions {
  /** The operator's words, kept in the audit trail (`erasures.reason`). Required. */
  reason: string;
  now?: () => number;
}

function checked(match: CandidateMatch, reason: string): CandidateMatch {
  if (typeof reason !== 'string' || reason.trim() === '') throw new ErasureRequestError('an erasure needs a reason (kept in the audit trail, without personal data)');
  const given = Object.entries(match ?? {}).filter(([, v]) => v !== undefined);
  if (given.length !== 1 || !['candidateId', 'email', 'phone'].includes(given[0]![0]) || typeof given[0]![1] !== 'string' || given[0]![1].trim() === '') {
    throw new ErasureRequestError('name the candidate by exactly one of candidateId, email or phone');
  }
  const [key, value] = given[0] as [keyof CandidateMatch, string];
  return { [key]: value.trim() } as CandidateMatch;
}

function described(match: CandidateMatch): string {
  return 'candidateId' in match ? `no candidate ${match.candidateId} is known here` : 'email' in match ? 'no candidate has that e-mail here' : 'no candidate has that phone here';
}

/**
 * Erases one candidate: the projected row and interview responses deleted, every stored event
 * naming them redacted, the erasure recorded; then the engine scrubbed (SQLite: WAL checkpointed
 * and truncated; PostgreSQL: the touched tables vacuumed). Safe while receivers run.
 */
export async function eraseCandidate(store: Store, match: CandidateMatch, options: EraseOptions): Promise<ErasureReport> {
  const request = checked(match, options.reason);
  const erasedAt = new Date((options.now ?? Date.now)()).toISOString();
  const outcome = await store.write((tx) => tx.eraseCandidate({ match: request, erasedAt, reason: options.reason.trim() }));
  if (!outcome.found) throw new UnknownCandidateError(described(request));
  const { complete } = await store.scrub();
  return { candidateId: outcome.candidateId, erasedAt, eventsRedacted: outcome.eventsRedacted, scrubbed: complete };
}
