// Erasure of a candidate (docs/projection.md section 8) on PostgreSQL: one transaction that deletes the
// projected rows, redacts every stored event naming the person, and records the erasure; then the
// touched tables vacuumed, so that the dead tuples holding the erased values are gone. An erasure
// reaches one account's rows (docs/projection.md section 9); its hooks are claimed across accounts.
import { bodyOf, storedBody } from '../bodies.js';
import { erasureInstants, REDACTED_REASONS_JSON, redactedBody, type PersonValues } from '../../events/index.js';
import { candidatesMatching, erasureCounts, reasonsOnceRedacted, rowsNaming, unprojected } from '../erasure-rows.js';
import type { ErasureHookRow, ErasureHookSettlement, ErasureOutcome, ErasureRequest } from '../rows.js';
import { postgresSql } from './reads.js';
import { eraseChanges } from './changes.js';
import { query, type Engine, type Session } from './session.js';

// Erasures and the projection of candidates are serialised by one transaction-level advisory lock
// per account, shared by projections and exclusive for an erasure, taken before any row lock: a
// projection that read no tombstone cannot commit a row for a person whose erasure commits
// meanwhile (replicas project concurrently). Erasures are rare and short; while one runs, that
// account's projection waits, other accounts' goes on, and intake goes on acknowledging.
// 'preq': apart from the migrations' lock; one per schema and account (a hash collision only
// makes two accounts wait for each other).
const ERASURE_LOCK = `SELECT pg_advisory_xact_lock%s(1886545265, hashtext(current_schema() || ' ' || $1))`;

/** Takes the account's erasure lock: `shared` for a projection, exclusive for an erasure. */
async function erasureLock(tx: Session, account: string, mode: 'shared' | 'exclusive'): Promise<void> {
  await query(tx, ERASURE_LOCK.replace('%s', mode === 'shared' ? '_shared' : ''), [account]);
}

/** The latest erasure of each of these candidates of the account that has one (ms); erasures wait for this transaction. */
export async function erasures(tx: Session, account: string, candidateIds: readonly string[]): Promise<Map<string, number>> {
  if (candidateIds.length === 0) return new Map();
  const ids = [...new Set(candidateIds)];
  // A statement of its own: the read below takes its snapshot after the lock is held, so that it
  // sees an erasure that committed while this transaction waited.
  await erasureLock(tx, account, 'shared');
  const rows = await query<{ candidate_id: string; erased_at: Date }>(
    tx,
    'SELECT candidate_id, MAX(erased_at) AS erased_at FROM erasures WHERE account = $2 AND candidate_id = ANY($1::text[]) GROUP BY candidate_id',
    [ids, account],
  );
  return erasureInstants(rows);
}

/**
 * The people a request names among the account's projected candidates, locked: by id, or every
 * candidate whose e-mail or phone matches.
 */
async function find(tx: Session, account: string, match: ErasureRequest['match']): Promise<PersonValues[]> {
  if ('candidateIds' in match || 'candidateId' in match) {
    const ids = 'candidateIds' in match ? [...match.candidateIds] : [match.candidateId];
    return await query<PersonValues>(
      tx,
      'SELECT candidate_id, email, phone FROM candidates WHERE account = $2 AND candidate_id = ANY($1::text[]) ORDER BY candidate_id FOR UPDATE',
      [ids, account],
    );
  }
  return await candidatesMatching(postgresSql(tx), account, match, ' FOR UPDATE');
}

/** Whether the copied erasure (its one candidate at its instant) is recorded already. */
async function copiedAlready(tx: Session, account: string, request: ErasureRequest): Promise<boolean> {
  if (!('candidateId' in request.match)) return false;
  const found = await query(tx, 'SELECT 1 FROM erasures WHERE account = $1 AND candidate_id = $2 AND erased_at = $3::timestamptz', [
    account,
    request.match.candidateId,
    request.erasedAt,
  ]);
  return found.length > 0;
}

/** Puts these bodies in place of the stored ones (an erased candidate's events, redacted). */
export async function replaceBodies(tx: Session, rows: ReadonlyArray<{ inboxId: number; raw: Uint8Array }>): Promise<void> {
  if (rows.length === 0) return;
  const bodies = rows.map((r) => storedBody(r.raw));
  await query(
    tx,
    'UPDATE inbox SET raw = v.raw, codec = v.codec FROM unnest($1::bigint[], $2::bytea[], $3::integer[]) AS v(inbox_id, raw, codec) WHERE inbox.inbox_id = v.inbox_id',
    [rows.map((r) => r.inboxId), bodies.map((b) => b.bytes), bodies.map((b) => b.codec)],
  );
}

/** Redacts these rows: their bodies and reasons replaced, and their handlers' failures stripped of their messages (which may name the person). */
async function redactRows(tx: Session, rows: ReadonlyArray<{ inboxId: number; raw: Uint8Array; reasons: string | null }>): Promise<void> {
  if (rows.length === 0) return;
  // Written in the compact form, computed from the redacted body alone (the dictionary holds no one's values).
  const bodies = rows.map((r) => storedBody(r.raw));
  await query(
    tx,
    `UPDATE inbox SET raw = v.raw, codec = v.codec, reasons = v.reasons
     FROM unnest($1::bigint[], $2::bytea[], $3::integer[], $4::text[]) AS v(inbox_id, raw, codec, reasons) WHERE inbox.inbox_id = v.inbox_id`,
    [rows.map((r) => r.inboxId), bodies.map((b) => b.bytes), bodies.map((b) => b.codec), rows.map((r) => r.reasons)],
  );
  await query(tx, `UPDATE handler_failures SET error = '(erased)' WHERE inbox_id = ANY($1::bigint[])`, [rows.map((r) => r.inboxId)]);
}

/** Erases a person (one candidate or several) of the account inside the caller's write transaction. */
export async function eraseCandidate(tx: Session, account: string, request: ErasureRequest): Promise<ErasureOutcome> {
  await erasureLock(tx, account, 'exclusive');
  if (request.copied === true && (await copiedAlready(tx, account, request))) return { found: false };
  const projected = await find(tx, account, request.match);
  const people = projected.length === 0 ? unprojected(request.match) : projected;
  if (people.length === 0) return { found: false };
  const rows = await rowsNaming(postgresSql(tx), account, people);
  const erasedHere = projected.length > 0 || rows.length > 0;
  if (!erasedHere && request.copied !== true) return { found: false };
  await redactRows(
    tx,
    rows.map((row) => ({ inboxId: row.inbox_id, raw: redactedBody(row.raw), reasons: reasonsOnceRedacted(row) })),
  );
  const outcome = erasureCounts(people, rows);
  const ids = outcome.candidates.map((c) => c.candidateId);
  await query(tx, 'DELETE FROM interview_responses WHERE account = $2 AND candidate_id = ANY($1::text[])', [ids, account]);
  await query(tx, 'DELETE FROM candidates WHERE account = $2 AND candidate_id = ANY($1::text[])', [ids, account]);
  // A rebuild under way keeps a copy of the row: it goes too.
  await query(tx, 'DELETE FROM rebuild_candidates WHERE account = $2 AND candidate_id = ANY($1::text[])', [ids, account]);
  await query(
    tx,
    `WITH erased AS (
       INSERT INTO erasures (account, candidate_id, erased_at, reason, events_redacted)
       SELECT $5, id, $2::timestamptz, $3, n FROM unnest($1::text[], $4::integer[]) AS v(id, n) ORDER BY id
       RETURNING erasure_id, erased_at)
     INSERT INTO erasure_hooks (erasure_id, due_at) SELECT erasure_id, erased_at FROM erased WHERE $6::boolean`,
    [ids, request.erasedAt, request.reason, outcome.candidates.map((c) => c.eventsRedacted), account, erasedHere],
  );
  // The feed: their earlier changes reduced to keys, one `erase` each (docs/projection.md section 10);
  // a copied erasure that found nothing here has nothing to announce.
  if (erasedHere) await eraseChanges(tx, account, ids);
  return outcome;
}

/** After the erasure committed: the tables it touched vacuumed (outside any transaction). */
export async function scrub(engine: Engine): Promise<{ complete: boolean }> {
  for (const table of ['inbox', 'candidates', 'interview_responses', 'handler_failures', 'changes', 'rebuild_candidates']) {
    await query(engine.pooled, `VACUUM ${table}`);
  }
  return { complete: true };
}

/** Redacts every row of the account set aside (unknown kinds, dead letters) received before `before` (retention). */
export async function redactSetAside(tx: Session, account: string, before: string): Promise<number> {
  const stored = await query<{ inbox_id: string; raw: Buffer; codec: number | null; reasons: string | null }>(
    tx,
    `SELECT inbox_id, raw, codec, reasons FROM inbox WHERE account = $2 AND state IN ('unknown', 'dead') AND received_at < $1::timestamptz`,
    [before, account],
  );
  const rows = stored.map((r) => ({ ...r, raw: bodyOf(r.codec, r.raw) }));
  const reasons = REDACTED_REASONS_JSON;
  const changed = rows
    .map((r) => ({ inboxId: Number(r.inbox_id), raw: Buffer.from(redactedBody(r.raw)), reasons, old: r }))
    .filter((r) => Buffer.compare(r.raw, r.old.raw) !== 0 || r.old.reasons !== reasons);
  await redactRows(tx, changed);
  return changed.length;
}

/**
 * Claims erasures of every account whose hooks are due, inside the caller's transaction (rows
 * another process is claiming are skipped); each names its account.
 */
export async function claimErasureHooks(tx: Session, now: string, claimUntil: string, limit: number): Promise<ErasureHookRow[]> {
  const rows = await query<{
    erasure_id: string;
    rounds: number;
    account: string;
    candidate_id: string;
    erased_at: string;
    reason: string;
  }>(
    tx,
    `WITH due AS (
       SELECT erasure_id FROM erasure_hooks
        WHERE due_at <= $1::timestamptz AND (claimed_until IS NULL OR claimed_until <= $1::timestamptz)
        ORDER BY due_at, erasure_id LIMIT $3 FOR UPDATE SKIP LOCKED),
     claimed AS (UPDATE erasure_hooks h SET claimed_until = $2::timestamptz FROM due WHERE h.erasure_id = due.erasure_id RETURNING h.erasure_id, h.rounds)
     SELECT claimed.erasure_id, claimed.rounds, e.account, e.candidate_id, e.erased_at, e.reason
     FROM claimed JOIN erasures e USING (erasure_id) ORDER BY claimed.erasure_id`,
    [now, claimUntil, limit],
  );
  return rows.map((r) => ({
    erasureId: Number(r.erasure_id),
    account: r.account,
    candidateId: r.candidate_id,
    erasedAt: r.erased_at,
    reason: r.reason,
    rounds: r.rounds,
  }));
}

export async function settleErasureHook(tx: Session, erasureId: number, settlement: ErasureHookSettlement): Promise<void> {
  if (settlement.state === 'done') await query(tx, 'DELETE FROM erasure_hooks WHERE erasure_id = $1', [erasureId]);
  else if (settlement.state === 'released')
    await query(tx, 'UPDATE erasure_hooks SET claimed_until = NULL WHERE erasure_id = $1', [erasureId]);
  else {
    await query(
      tx,
      'UPDATE erasure_hooks SET rounds = rounds + 1, due_at = $2::timestamptz, claimed_until = NULL, last_error = $3 WHERE erasure_id = $1',
      [erasureId, settlement.dueAt, settlement.error],
    );
  }
}
