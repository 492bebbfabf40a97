// Erasure of a candidate (PROJECTION.md section 8) on PostgreSQL: one transaction that deletes the
// projected rows, redacts every stored event naming the person, and records the erasure; then the
// touched tables vacuumed, so that the dead tuples holding the erased values are gone.
import { erasureInstants, redactedBody } from '../../events/index.js';
import type { ErasureHookRow, ErasureHookSettlement, ErasureOutcome, ErasureRequest } from '../store.js';
import { query, type Engine, type Session } from './session.js';

// Erasures and the projection of candidates are serialised by one transaction-level advisory lock,
// shared by projections and exclusive for an erasure, taken before any row lock: a projection that
// read no tombstone cannot commit a row for a person whose erasure commits meanwhile (replicas
// project concurrently). Erasures are rare and short; while one runs, projection waits and
// intake goes on acknowledging.
const ERASURE_LOCK = 'SELECT pg_advisory_xact_lock%s(1886545265, hashtext(current_schema()))'; // 'preq': apart from the migrations' lock; one per schema

/** The latest erasure of each of these candidates that has one (ms); erasures wait for this transaction. */
export async function erasures(tx: Session, candidateIds: readonly string[]): Promise<Map<string, number>> {
  if (candidateIds.length === 0) return new Map();
  const ids = [...new Set(candidateIds)];
  // A statement of its own: the read below takes its snapshot after the lock is held, so that it
  // sees an erasure that committed while this transaction waited.
  await query(tx, ERASURE_LOCK.replace('%s', '_shared'));
  const rows = await query<{ candidate_id: string; erased_at: Date }>(
    tx,
    'SELECT candidate_id, MAX(erased_at) AS erased_at FROM erasures WHERE candidate_id = ANY($1::text[]) GROUP BY candidate_id',
    [ids],
  );
  return erasureInstants(rows);
}

type Found = { candidate_id: string; email: string | null; phone: string | null };

async function find(tx: Session, request: ErasureRequest): Promise<{ candidateId: string; needles: string[] } | undefined> {
  const { match } = request;
  await query(tx, ERASURE_LOCK.replace('%s', ''));
  const [located] =
    'candidateId' in match
      ? [{ candidate_id: match.candidateId }]
      : 'email' in match
        ? await query<{ candidate_id: string }>(tx, 'SELECT candidate_id FROM candidates WHERE lower(email) = lower($1) ORDER BY candidate_id LIMIT 1', [match.email])
        : await query<{ candidate_id: string }>(tx, 'SELECT candidate_id FROM candidates WHERE phone = $1 ORDER BY candidate_id LIMIT 1', [match.phone]);
  if (located === undefined) return undefined;
  const [row] = await query<Found>(tx, 'SELECT candidate_id, email, phone FROM candidates WHERE candidate_id = $1 FOR UPDATE', [located.candidate_id]);
  if (row !== undefined) return { candidateId: row.candidate_id, needles: [row.candidate_id, row.email, row.phone].filter((n): n is string => typeof n === 'string' && n !== '') };
  if (!('candidateId' in match)) return undefined; // erased or changed meanwhile
  // Known only from events (none projected yet, or set aside): still erasable by id.
  const named = await query(tx, 'SELECT 1 FROM inbox WHERE handler_key = $1 LIMIT 1', [`candidate:${match.candidateId}`]);
  return named.length === 0 ? undefined : { candidateId: match.candidateId, needles: [match.candidateId] };
}

/** Puts these bodies in place of the stored ones (an erased candidate's events, redacted). */
export async function replaceBodies(tx: Session, rows: ReadonlyArray<{ inboxId: number; raw: Uint8Array }>): Promise<void> {
  if (rows.length === 0) return;
  await query(tx, 'UPDATE inbox SET raw = v.raw FROM unnest($1::bigint[], $2::bytea[]) AS v(inbox_id, raw) WHERE inbox.inbox_id = v.inbox_id', [
    rows.map((r) => r.inboxId),
    rows.map((r) => Buffer.from(r.raw)),
  ]);
}

/** Redacts these rows: their bodies replaced, and their handlers' failures stripped of their messages (which may name the person). */
async function redactRows(tx: Session, rows: ReadonlyArray<{ inboxId: number; raw: Uint8Array }>): Promise<void> {
  if (rows.length === 0) return;
  await replaceBodies(tx, rows);
  await query(tx, `UPDATE handler_failures SET error = '(erased)' WHERE inbox_id = ANY($1::bigint[])`, [rows.map((r) => r.inboxId)]);
}

/** Erases one candidate inside the caller's write transaction. */
export async function eraseCandidate(tx: Session, request: ErasureRequest): Promise<ErasureOutcome> {
  const found = await find(tx, request);
  if (found === undefined) return { found: false };
  const { candidateId, needles } = found;
  const rows = await query<{ inbox_id: string; raw: Buffer }>(
    tx,
    `SELECT inbox_id, raw FROM inbox WHERE handler_key = $1
     UNION
     SELECT inbox_id, raw FROM inbox WHERE state IN ('unknown', 'dead') AND EXISTS (SELECT 1 FROM unnest($2::bytea[]) AS n(needle) WHERE position(n.needle IN raw) > 0)`,
    [`candidate:${candidateId}`, needles.map((n) => Buffer.from(n, 'utf8'))],
  );
  const ids = rows.map((r) => Number(r.inbox_id));
  await redactRows(tx, rows.map((r, i) => ({ inboxId: ids[i]!, raw: redactedBody(r.raw) })));
  await query(tx, 'DELETE FROM interview_responses WHERE candidate_id = $1', [candidateId]);
  await query(tx, 'DELETE FROM candidates WHERE candidate_id = $1', [candidateId]);
  await query(
    tx,
    `WITH erased AS (INSERT INTO erasures (candidate_id, erased_at, reason, events_redacted) VALUES ($1, $2::timestamptz, $3, $4) RETURNING erasure_id, erased_at)
     INSERT INTO erasure_hooks (erasure_id, due_at) SELECT erasure_id, erased_at FROM erased`,
    [candidateId, request.erasedAt, request.reason, rows.length],
  );
  return { found: true, candidateId, eventsRedacted: rows.length, inboxIds: ids.sort((a, b) => a - b) };
}

/** After the erasure committed: the tables it touched vacuumed (outside any transaction). */
export async function scrub(engine: Engine): Promise<{ complete: boolean }> {
  for (const table of ['inbox', 'candidates', 'interview_responses', 'handler_failures']) {
    await query(engine.pooled, `VACUUM ${table}`);
  }
  return { complete: true };
}

/** Redacts every row set aside (unknown kinds, dead letters) received before `before` (retention). */
export async function redactSetAside(tx: Session, before: string): Promise<number> {
  const rows = await query<{ inbox_id: string; raw: Buffer }>(tx, `SELECT inbox_id, raw FROM inbox WHERE state IN ('unknown', 'dead') AND received_at < $1::timestamptz`, [before]);
  const changed = rows.map((r) => ({ inboxId: Number(r.inbox_id), raw: Buffer.from(redactedBody(r.raw)), old: r.raw })).filter((r) => Buffer.compare(r.raw, r.old) !== 0);
  await redactRows(tx, changed);
  return changed.length;
}

/** Claims erasures whose hooks are due, inside the caller's transaction (rows another process is claiming are skipped). */
export async function claimErasureHooks(tx: Session, now: string, claimUntil: string, limit: number): Promise<ErasureHookRow[]> {
  const rows = await query<{ erasure_id: string; rounds: number; candidate_id: string; erased_at: string; reason: string }>(
    tx,
    `WITH due AS (
       SELECT erasure_id FROM erasure_hooks
        WHERE due_at <= $1::timestamptz AND (claimed_until IS NULL OR claimed_until <= $1::timestamptz)
        ORDER BY due_at, erasure_id LIMIT $3 FOR UPDATE SKIP LOCKED),
     claimed AS (UPDATE erasure_hooks h SET claimed_until = $2::timestamptz FROM due WHERE h.erasure_id = due.erasure_id RETURNING h.erasure_id, h.rounds)
     SELECT claimed.erasure_id, claimed.rounds, e.candidate_id, e.erased_at, e.reason FROM claimed JOIN erasures e USING (erasure_id) ORDER BY claimed.erasure_id`,
    [now, claimUntil, limit],
  );
  return rows.map((r) => ({ erasureId: Number(r.erasure_id), candidateId: r.candidate_id, erasedAt: r.erased_at, reason: r.reason, rounds: r.rounds }));
}

export async function settleErasureHook(tx: Session, erasureId: number, settlement: ErasureHookSettlement): Promise<void> {
  if (settlement.state === 'done') await query(tx, 'DELETE FROM erasure_hooks WHERE erasure_id = $1', [erasureId]);
  else if (settlement.state === 'released') await query(tx, 'UPDATE erasure_hooks SET claimed_until = NULL WHERE erasure_id = $1', [erasureId]);
  else {
    await query(tx, 'UPDATE erasure_hooks SET rounds = rounds + 1, due_at = $2::timestamptz, claimed_until = NULL, last_error = $3 WHERE erasure_id = $1', [erasureId, settlement.dueAt, settlement.error]);
  }
}
