// Erasing a person (GDPR article 17, docs/projection.md section 8): one transaction on either engine,
// then nothing of what was erased left where the engine can reach it.
import type { CandidateMatch, ErasureOutcome } from '../store/rows.js';
import type { StoreHandle } from '../store/handle.js';
import { storePorts, type Store } from '../store/store.js';

/** A request the erasure refuses before touching anything: no reason, or no one named. */
export class ErasureRequestError extends Error {
  /** Always `ErasureRequestError`, to tell it apart from other errors. */
  override name = 'ErasureRequestError';
}

/** No candidate matches: nothing was changed. The message never repeats an e-mail or a phone. */
export class UnknownCandidateError extends Error {
  /** Always `UnknownCandidateError`, to tell it apart from other errors. */
  override name = 'UnknownCandidateError';
}

/**
 * What an erasure did: ids and counts, never the erased values. By `candidateId`, that candidate;
 * by `email` or `phone`, every candidate whose projected e-mail (any case) or phone (any spacing)
 * matches: a person who applied twice has two ids, each with its own row in `erasures`.
 */
export interface ErasureReport {
  /** Every candidate erased, in id order (at least one). */
  candidateIds: string[];
  /** When it ran (UTC, ISO 8601 with milliseconds): later events dated at or before it change nothing. */
  erasedAt: string;
  /** Stored rows redacted, each counted once however many of the candidates it names. */
  eventsRedacted: number;
  /** Whether the erased bytes are gone from the engine's files (SQLite: the WAL was emptied); false in a dry run. */
  scrubbed: boolean;
  /** A dry run: what the erasure would do; nothing was changed. */
  dryRun: boolean;
}

/** Why and how `eraseCandidate` erases. */
export interface EraseOptions {
  /** The operator's words, kept in the audit trail (`erasures.reason`). Required. */
  reason: string;
  /** The clock of `erasedAt`, in Unix ms. Default `Date.now`. */
  now?: () => number;
  /** Say what would be erased, change nothing (the erasure runs in its transaction, then rolls back). */
  dryRun?: boolean;
}

/** Thrown inside a dry run's transaction, so that it rolls back with what it would have done. */
class Rollback extends Error {
  constructor(readonly outcome: ErasureOutcome) {
    super('dry run');
  }
}

function checked(match: CandidateMatch, reason: string): CandidateMatch {
  if (typeof reason !== 'string' || reason.trim() === '')
    throw new ErasureRequestError('an erasure needs a reason (kept in the audit trail, without personal data)');
  return checkedMatch(match);
}

/** The match with its value trimmed; ErasureRequestError unless it names exactly one of candidateId, email or phone. */
export function checkedMatch(match: CandidateMatch): CandidateMatch {
  const given = Object.entries(match ?? {}).filter(([, v]) => v !== undefined);
  if (
    given.length !== 1 ||
    !['candidateId', 'email', 'phone'].includes(given[0]![0]) ||
    typeof given[0]![1] !== 'string' ||
    given[0]![1].trim() === ''
  ) {
    throw new ErasureRequestError('name the candidate by exactly one of candidateId, email or phone');
  }
  const [key, value] = given[0] as [keyof CandidateMatch, string];
  return { [key]: value.trim() } as CandidateMatch;
}

/** Why no candidate matches, without repeating an e-mail or a phone. */
export function described(match: CandidateMatch): string {
  return 'candidateId' in match
    ? `no candidate ${match.candidateId} is known here`
    : 'email' in match
      ? 'no candidate has that e-mail here'
      : 'no candidate has that phone here';
}

/**
 * Erases a person, every candidate the match finds: the projected rows and interview responses
 * deleted, every stored row naming them redacted, each erasure recorded; then the engine scrubbed
 * (SQLite: WAL checkpointed and truncated; PostgreSQL: the touched tables vacuumed). Safe while
 * receivers run.
 */
export async function eraseCandidate(handle: StoreHandle, match: CandidateMatch, options: EraseOptions): Promise<ErasureReport> {
  const store: Pick<Store, 'write' | 'scrub'> = storePorts(handle);
  const request = checked(match, options.reason);
  const erasedAt = new Date((options.now ?? Date.now)()).toISOString();
  const dryRun = options.dryRun === true;
  let outcome: ErasureOutcome;
  try {
    outcome = await store.write(async (tx) => {
      const done = await tx.eraseCandidate({ match: request, erasedAt, reason: options.reason.trim() });
      if (dryRun) throw new Rollback(done);
      return done;
    });
  } catch (error) {
    if (!(error instanceof Rollback)) throw error;
    outcome = error.outcome;
  }
  if (!outcome.found) throw new UnknownCandidateError(described(request));
  const { complete } = dryRun ? { complete: false } : await store.scrub();
  return {
    candidateIds: outcome.candidates.map((c) => c.candidateId),
    erasedAt,
    eventsRedacted: outcome.eventsRedacted,
    scrubbed: complete,
    dryRun,
  };
}
