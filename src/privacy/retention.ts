// Retention (docs/projection.md section 8): erasing every candidate not heard of for a given age, with
// the same rules as one erasure, and the rows set aside received before it.
import { instantOfOrderKey, parseInstant, readEnvelope } from '../events/index.js';
import type { StoreHandle } from '../store/handle.js';
import { storePorts } from '../store/store.js';
import type { Store } from '../store/store.js';
import { ErasureRequestError } from './erase.js';

/** Which candidates `eraseInactive` erases, and how. */
export interface RetentionOptions {
  /** How old a candidate's latest event (by its timestamp) must be: a duration in ms, or a cutoff date. */
  olderThan: number | Date;
  /** Kept in the audit trail; default `retention`. */
  reason?: string;
  /** The clock the cutoff is counted from, in Unix ms. Default `Date.now`. */
  now?: () => number;
  /** Say what would be erased, change nothing (the transaction runs, then rolls back). */
  dryRun?: boolean;
}

/** What a retention run erased. */
export interface RetentionReport {
  /** Events (by their timestamp) and rows set aside (by when received) older than this were erased. */
  cutoff: string;
  /** Candidates erased. */
  candidatesErased: number;
  /** Their ids, in id order. */
  candidateIds: string[];
  /** Stored events redacted. */
  eventsRedacted: number;
  /** Rows set aside (unknown or dead) redacted, being older than the cutoff. */
  setAsideRedacted: number;
  /** Whether the erased bytes are gone from the engine's files; false in a dry run. */
  scrubbed: boolean;
  /** A dry run: what it would do; nothing was changed. */
  dryRun: boolean;
}

/** Thrown inside a dry run's transaction, so that it rolls back with what it would have done. */
class Rollback extends Error {
  constructor(readonly totals: { eventsRedacted: number; setAsideRedacted: number }) {
    super('dry run');
  }
}

/**
 * The latest event that set a candidate's columns, from the row's field versions (ms); -Infinity when none.
 * @public the erasure benchmark reads it from dist/ (bench/lib/erasure.ts), where knip cannot see.
 */
export function latestEventInstant(fieldVersions: string): number {
  const keys = fieldVersions
    .slice(0, fieldVersions.lastIndexOf('|'))
    .split(' ')
    .filter((k) => k !== '');
  let latest = -Infinity;
  for (const key of keys) latest = Math.max(latest, instantOfOrderKey(key));
  return latest;
}

/**
 * The latest event naming a candidate among the stored rows (ms), for a row whose versions say
 * nothing (written by hand, or by a version that kept none); -Infinity when no row dates it.
 */
async function latestStoredEvent(store: Pick<Store, 'people'>, candidateId: string): Promise<number> {
  const rows = await store.people.storedEventsOf(candidateId);
  let latest = -Infinity;
  for (const row of rows) {
    // event_at is the instant of the timestamp; rows stored before it existed are read for theirs.
    if (row.event_at !== null) {
      latest = Math.max(latest, row.event_at);
      continue;
    }
    const reading = readEnvelope(row.raw, 'unhashed');
    latest = Math.max(latest, reading.ok ? (parseInstant(reading.envelope.timestamp) ?? -Infinity) : -Infinity);
  }
  return latest;
}

/**
 * The candidates whose latest event is older than the cutoff, in id order, read a page at a time
 * (a million candidates need not be in memory at once). A row whose versions say nothing is dated
 * by the stored events naming it, and is stale when none does: nothing says it was heard of.
 */
async function staleCandidates(store: Pick<Store, 'people'>, cutoffMs: number): Promise<string[]> {
  const stale: string[] = [];
  for (let after = ''; ;) {
    const page = await store.people.candidateVersions(after, 5000);
    for (const r of page) {
      let latest = latestEventInstant(r.field_versions);
      if (latest === -Infinity) latest = await latestStoredEvent(store, r.candidate_id);
      if (!Number.isNaN(latest) && latest < cutoffMs) stale.push(r.candidate_id);
    }
    if (page.length < 5000) return stale.sort();
    after = page.at(-1)!.candidate_id;
  }
}

/**
 * Erases, in one transaction, every candidate whose latest event is older than the cutoff, and
 * redacts the rows set aside received before it; then scrubs. Returns counts and ids only.
 */
export async function eraseInactive(handle: StoreHandle, options: RetentionOptions): Promise<RetentionReport> {
  const store: Pick<Store, 'people' | 'write' | 'scrub'> = storePorts(handle);
  const now = (options.now ?? Date.now)();
  const cutoffMs = options.olderThan instanceof Date ? options.olderThan.getTime() : now - options.olderThan;
  if (!Number.isFinite(cutoffMs) || (!(options.olderThan instanceof Date) && !(options.olderThan > 0))) {
    throw new ErasureRequestError('olderThan must be a positive duration in milliseconds, or a date');
  }
  const reason = (options.reason ?? 'retention').trim();
  if (reason === '') throw new ErasureRequestError('an erasure needs a reason (kept in the audit trail, without personal data)');
  const cutoff = new Date(cutoffMs).toISOString();
  const erasedAt = new Date(now).toISOString();
  const stale = await staleCandidates(store, cutoffMs);
  let totals: { eventsRedacted: number; setAsideRedacted: number };
  try {
    totals = await store.write(async (tx) => {
      const outcome =
        stale.length === 0 ? { found: false as const } : await tx.eraseCandidate({ match: { candidateIds: stale }, erasedAt, reason });
      const done = { eventsRedacted: outcome.found ? outcome.eventsRedacted : 0, setAsideRedacted: await tx.redactSetAside(cutoff) };
      if (options.dryRun) throw new Rollback(done);
      return done;
    });
  } catch (error) {
    if (!(error instanceof Rollback)) throw error;
    return { cutoff, candidatesErased: stale.length, candidateIds: stale, ...error.totals, scrubbed: false, dryRun: true };
  }
  const { complete } = stale.length + totals.setAsideRedacted > 0 ? await store.scrub() : { complete: true };
  return { cutoff, candidatesErased: stale.length, candidateIds: stale, ...totals, scrubbed: complete, dryRun: false };
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** A duration such as 730d, 104w, 48h, 90m or 3600s, in ms; undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const m = /^\s*(\d+)\s*([smhdw])\s*$/i.exec(text);
  if (m === null) return undefined;
  const ms = Number(m[1]) * UNITS[m[2]!.toLowerCase()]!;
  return ms > 0 && Number.isSafeInteger(ms) ? ms : undefined;
}
