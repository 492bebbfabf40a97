// Erasure of a candidate (PROJECTION.md section 8) on SQLite: one transaction that deletes the
// projected rows, redacts every stored event naming the person, and records the erasure; then a
// scrub that leaves none of the erased bytes in the file or its WAL.
import { erasureInstants, redactedBody } from '../../events/index.js';
import type { ErasureHookRow, ErasureHookSettlement, ErasureOutcome, ErasureRequest } from '../store.js';
import { prepared, read, type SqliteConnection } from './connection.js';

/** The latest erasure of each of these candidates that has one (ms). */
export function erasures(connection: SqliteConnection, candidateIds: readonly string[]): Map<string, number> {
  if (candidateIds.length === 0) return new Map();
  const rows: Array<{ candidate_id: string; erased_at: string }> = [];
  const statement = prepared(connection, 'SELECT candidate_id, MAX(erased_at) AS erased_at FROM erasures WHERE candidate_id = ? GROUP BY candidate_id');
  for (const id of new Set(candidateIds)) {
    const row = statement.get(id) as { candidate_id: string; erased_at: string } | undefined;
    if (row !== undefined) rows.push(row);
  }
  return erasureInstants(rows);
}

/** The candidate a request names, with what its events may contain; undefined when none is known. */
function find(connection: SqliteConnection, request: ErasureRequest): { candidateId: string; needles: string[] } | undefined {
  const { match } = request;
  const row = (
    'candidateId' in match
      ? prepared(connection, 'SELECT candidate_id, email, phone FROM candidates WHERE candidate_id = ?').get(match.candidateId)
      : 'email' in match
        ? prepared(connection, 'SELECT candidate_id, email, phone FROM candidates WHERE lower(email) = lower(?) ORDER BY candidate_id LIMIT 1').get(match.email)
        : prepared(connection, 'SELECT candidate_id, email, phone FROM candidates WHERE phone = ? ORDER BY candidate_id LIMIT 1').get(match.phone)
  ) as { candidate_id: string; email: string | null; phone: string | null } | undefined;
  if (row !== undefined) return { candidateId: row.candidate_id, needles: [row.candidate_id, row.email, row.phone].filter((n): n is string => typeof n === 'string' && n !== '') };
  if (!('candidateId' in match)) return undefined;
  // Known only from events (none projected yet, or set aside): still erasable by id.
  const named = prepared(connection, 'SELECT 1 FROM inbox WHERE handler_key = ? LIMIT 1').get(`candidate:${match.candidateId}`);
  return named === undefined ? undefined : { candidateId: match.candidateId, needles: [match.candidateId] };
}

/** Redacts a row: its body replaced, and its handlers' failures stripped of their messages (which may name the person). */
function redactRow(connection: SqliteConnection, inboxId: number, redacted: Uint8Array): void {
  prepared(connection, 'UPDATE inbox SET raw = ? WHERE inbox_id = ?').run(redacted, inboxId);
  prepared(connection, `UPDATE handler_failures SET error = '(erased)' WHERE inbox_id = ?`).run(inboxId);
}

/** Erases one candidate inside the caller's write transaction. */
export function eraseCandidate(connection: SqliteConnection, request: ErasureRequest): ErasureOutcome {
  const found = find(connection, request);
  if (found === undefined) return { found: false };
  const { candidateId, needles } = found;
  const rows = new Map<number, Uint8Array>();
  for (const row of prepared(connection, 'SELECT inbox_id, raw FROM inbox WHERE handler_key = ?').all(`candidate:${candidateId}`) as Array<{ inbox_id: number; raw: Uint8Array }>) {
    rows.set(row.inbox_id, row.raw);
  }
  // Rows set aside (unknown kinds, dead letters) may name the person anywhere in their bytes.
  const scan = prepared(connection, `SELECT inbox_id, raw FROM inbox WHERE state IN ('unknown', 'dead') AND instr(raw, ?) > 0`);
  for (const needle of needles) {
    for (const row of scan.all(Buffer.from(needle, 'utf8')) as Array<{ inbox_id: number; raw: Uint8Array }>) rows.set(row.inbox_id, row.raw);
  }
  for (const [inboxId, raw] of rows) redactRow(connection, inboxId, redactedBody(raw));
  prepared(connection, 'DELETE FROM interview_responses WHERE candidate_id = ?').run(candidateId);
  prepared(connection, 'DELETE FROM candidates WHERE candidate_id = ?').run(candidateId);
  const { lastInsertRowid } = prepared(connection, 'INSERT INTO erasures (candidate_id, erased_at, reason, events_redacted) VALUES (?, ?, ?, ?)').run(candidateId, request.erasedAt, request.reason, rows.size);
  prepared(connection, 'INSERT INTO erasure_hooks (erasure_id, due_at) VALUES (?, ?)').run(lastInsertRowid, request.erasedAt);
  return { found: true, candidateId, eventsRedacted: rows.size, inboxIds: [...rows.keys()].sort((a, b) => a - b) };
}

/**
 * After the erasure committed: the WAL checkpointed into the file and truncated, so that neither
 * holds the erased bytes (the connection overwrites deleted content: secure_delete). A reader in
 * another process can hold the checkpoint back: tried a few times, then said.
 */
export async function scrub(connection: SqliteConnection): Promise<{ complete: boolean }> {
  for (let tries = 0; tries < 20; tries++) {
    // Between this connection's transactions: a checkpoint cannot run inside one.
    const [result] = await read(connection, () => connection.db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number; log: number; checkpointed: number }>);
    if (result === undefined || result.busy === 0) return { complete: true };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { complete: false };
}

/** Redacts every row set aside (unknown kinds, dead letters) received before `before` (retention). */
export function redactSetAside(connection: SqliteConnection, before: string): number {
  const rows = prepared(connection, `SELECT inbox_id, raw FROM inbox WHERE state IN ('unknown', 'dead') AND received_at < ?`).all(before) as Array<{ inbox_id: number; raw: Uint8Array }>;
  let changed = 0;
  for (const row of rows) {
    const redacted = redactedBody(row.raw);
    if (Buffer.compare(Buffer.from(redacted), Buffer.from(row.raw)) === 0) continue;
    redactRow(connection, row.inbox_id, redacted);
    changed++;
  }
  return changed;
}

/** Claims erasures whose hooks are due, inside the caller's write transaction. */
export function claimErasureHooks(connection: SqliteConnection, now: string, claimUntil: string, limit: number): ErasureHookRow[] {
  const rows = prepared(
    connection,
    `UPDATE erasure_hooks SET claimed_until = ?
      WHERE erasure_id IN (SELECT erasure_id FROM erasure_hooks WHERE due_at <= ? AND (claimed_until IS NULL OR claimed_until <= ?) ORDER BY due_at, erasure_id LIMIT ?)
      RETURNING erasure_id, rounds`,
  ).all(claimUntil, now, now, limit) as Array<{ erasure_id: number; rounds: number }>;
  const erasure = prepared(connection, 'SELECT candidate_id, erased_at, reason FROM erasures WHERE erasure_id = ?');
  return rows
    .map((r) => {
      const e = erasure.get(r.erasure_id) as { candidate_id: string; erased_at: string; reason: string };
      return { erasureId: r.erasure_id, candidateId: e.candidate_id, erasedAt: e.erased_at, reason: e.reason, rounds: r.rounds };
    })
    .sort((a, b) => a.erasureId - b.erasureId);
}

export function settleErasureHook(connection: SqliteConnection, erasureId: number, settlement: ErasureHookSettlement): void {
  if (settlement.state === 'done') prepared(connection, 'DELETE FROM erasure_hooks WHERE erasure_id = ?').run(erasureId);
  else if (settlement.state === 'released') prepared(connection, 'UPDATE erasure_hooks SET claimed_until = NULL WHERE erasure_id = ?').run(erasureId);
  else {
    prepared(connection, 'UPDATE erasure_hooks SET rounds = rounds + 1, due_at = ?, claimed_until = NULL, last_error = ? WHERE erasure_id = ?').run(settlement.dueAt, settlement.error, erasureId);
  }
}
