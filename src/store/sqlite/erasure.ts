// Erasure of a candidate (docs/projection.md section 8) on SQLite: one transaction that deletes the
// projected rows, redacts every stored event naming the person, and records the erasure; then a
// scrub that leaves none of the erased bytes in the file or its WAL. An erasure reaches one
// account's rows (docs/projection.md section 9); the hooks it owes are claimed across accounts.
import { erasureInstants, REDACTED_REASONS_JSON, redactedBody, type PersonValues } from '../../events/index.js';
import { candidatesMatching, erasureCounts, reasonsOnceRedacted, rowsNaming, unprojected } from '../erasure-rows.js';
import type { ErasureHookRow, ErasureHookSettlement, ErasureOutcome, ErasureRequest } from '../rows.js';
import { prepared, read, type SqliteConnection } from './connection.js';
import { sqliteSql } from './reads.js';
import { eraseChanges } from './changes.js';
import { bodyOf, storedBody } from '../bodies.js';
import { instantMs } from '../instants.js';

/** The latest erasure of each of these candidates of the account that has one (ms). */
export function erasures(connection: SqliteConnection, account: string, candidateIds: readonly string[]): Map<string, number> {
  if (candidateIds.length === 0) return new Map();
  const rows: Array<{ candidate_id: string; erased_at: string }> = [];
  const statement = prepared(
    connection,
    'SELECT candidate_id, MAX(erased_at) AS erased_at FROM erasures WHERE account = ? AND candidate_id = ? GROUP BY candidate_id',
  );
  for (const id of new Set(candidateIds)) {
    const row = statement.get(account, id) as { candidate_id: string; erased_at: string } | undefined;
    if (row !== undefined) rows.push(row);
  }
  return erasureInstants(rows);
}

/** Whether the copied erasure (its one candidate at its instant) is recorded already. */
function copiedAlready(connection: SqliteConnection, account: string, request: ErasureRequest): boolean {
  if (!('candidateId' in request.match)) return false;
  const statement = prepared(connection, 'SELECT 1 FROM erasures WHERE account = ? AND candidate_id = ? AND erased_at = ?');
  return statement.get(account, request.match.candidateId, request.erasedAt) !== undefined;
}

/** The account's candidates by id, as projected (those that are). */
function byIds(connection: SqliteConnection, account: string, ids: readonly string[]): PersonValues[] {
  const statement = prepared(connection, 'SELECT candidate_id, email, phone FROM candidates WHERE account = ? AND candidate_id = ?');
  return [...new Set(ids)].flatMap((id) => (statement.get(account, id) as PersonValues | undefined) ?? []);
}

/** The people a request names, as projected: by id, or every candidate whose e-mail or phone matches. */
async function find(connection: SqliteConnection, account: string, match: ErasureRequest['match']): Promise<PersonValues[]> {
  if ('candidateIds' in match) return byIds(connection, account, match.candidateIds);
  if ('candidateId' in match) return byIds(connection, account, [match.candidateId]);
  return await candidatesMatching(sqliteSql(connection), account, match);
}

/** Redacts a row: its body and reasons replaced, and its handlers' failures stripped of their messages (which may name the person). */
function redactRow(connection: SqliteConnection, inboxId: number, redacted: Uint8Array, reasons: string | null): void {
  // Written in the compact form, computed from the redacted body alone: nothing of the original
  // survives in it (the dictionary holds no one's values), and secure_delete overwrites the old cell.
  const body = storedBody(redacted);
  prepared(connection, 'UPDATE inbox SET raw = ?, codec = ?, reasons = ? WHERE inbox_id = ?').run(body.bytes, body.codec, reasons, inboxId);
  prepared(connection, `UPDATE handler_failures SET error = '(erased)' WHERE inbox_id = ?`).run(inboxId);
}

/** Erases a person of the account (one candidate or several) inside the caller's write transaction. */
export async function eraseCandidate(connection: SqliteConnection, account: string, request: ErasureRequest): Promise<ErasureOutcome> {
  if (request.copied === true && copiedAlready(connection, account, request)) return { found: false };
  const projected = await find(connection, account, request.match);
  const people = projected.length === 0 ? unprojected(request.match) : projected;
  if (people.length === 0) return { found: false };
  const rows = await rowsNaming(sqliteSql(connection), account, people);
  const erasedHere = projected.length > 0 || rows.length > 0;
  if (!erasedHere && request.copied !== true) return { found: false };
  for (const row of rows) redactRow(connection, row.inbox_id, redactedBody(row.raw), reasonsOnceRedacted(row));
  const outcome = erasureCounts(people, rows);
  for (const { candidateId, eventsRedacted } of outcome.candidates) {
    prepared(connection, 'DELETE FROM interview_responses WHERE account = ? AND candidate_id = ?').run(account, candidateId);
    prepared(connection, 'DELETE FROM candidates WHERE account = ? AND candidate_id = ?').run(account, candidateId);
    // A rebuild under way keeps a copy of the row: it goes too.
    prepared(connection, 'DELETE FROM rebuild_candidates WHERE account = ? AND candidate_id = ?').run(account, candidateId);
    const { lastInsertRowid } = prepared(
      connection,
      'INSERT INTO erasures (account, candidate_id, erased_at, reason, events_redacted) VALUES (?, ?, ?, ?, ?)',
    ).run(account, candidateId, request.erasedAt, request.reason, eventsRedacted);
    if (erasedHere)
      prepared(connection, 'INSERT INTO erasure_hooks (erasure_id, due_at) VALUES (?, ?)').run(lastInsertRowid, request.erasedAt);
  }
  // The feed: their earlier changes reduced to keys, one `erase` each (docs/projection.md section 10);
  // a copied erasure that found nothing here has nothing to announce.
  if (erasedHere)
    eraseChanges(
      connection,
      account,
      outcome.candidates.map((c) => c.candidateId),
      new Date().toISOString(),
    );
  return outcome;
}

/**
 * After the erasure committed: the WAL checkpointed into the file and truncated, so that neither
 * holds the erased bytes (the connection overwrites deleted content: secure_delete). A reader in
 * another process can hold the checkpoint back: tried a few times, then said.
 */
export async function scrub(connection: SqliteConnection): Promise<{ complete: boolean }> {
  for (let tries = 0; tries < 20; tries++) {
    // Between this connection's transactions: a checkpoint cannot run inside one.
    const [result] = await read(
      connection,
      () => connection.db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number; log: number; checkpointed: number }>,
    );
    if (result === undefined || result.busy === 0) return { complete: true };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { complete: false };
}

/** Redacts every row of the account set aside (unknown kinds, dead letters) received before `before` (retention). */
export function redactSetAside(connection: SqliteConnection, account: string, before: string): number {
  const rows = prepared(
    connection,
    `SELECT inbox_id, raw, codec, reasons FROM inbox WHERE account = ? AND state IN ('unknown', 'dead') AND received_at < ?`,
  ).all(account, instantMs(before)) as Array<{ inbox_id: number; raw: Uint8Array; codec: number | null; reasons: string | null }>;
  const reasons = REDACTED_REASONS_JSON;
  let changed = 0;
  for (const row of rows) {
    const raw = bodyOf(row.codec, row.raw);
    const redacted = redactedBody(raw);
    if (Buffer.compare(Buffer.from(redacted), raw) === 0 && row.reasons === reasons) continue;
    redactRow(connection, row.inbox_id, redacted, reasons);
    changed++;
  }
  return changed;
}

/** Claims erasures whose hooks are due, of every account, inside the caller's write transaction. */
export function claimErasureHooks(connection: SqliteConnection, now: string, claimUntil: string, limit: number): ErasureHookRow[] {
  const rows = prepared(
    connection,
    `UPDATE erasure_hooks SET claimed_until = ?
      WHERE erasure_id IN (SELECT erasure_id FROM erasure_hooks WHERE due_at <= ? AND (claimed_until IS NULL OR claimed_until <= ?) ORDER BY due_at, erasure_id LIMIT ?)
      RETURNING erasure_id, rounds`,
  ).all(claimUntil, now, now, limit) as Array<{ erasure_id: number; rounds: number }>;
  const erasure = prepared(connection, 'SELECT account, candidate_id, erased_at, reason FROM erasures WHERE erasure_id = ?');
  return rows
    .map((r) => {
      const e = erasure.get(r.erasure_id) as { account: string; candidate_id: string; erased_at: string; reason: string };
      return {
        erasureId: r.erasure_id,
        account: e.account,
        candidateId: e.candidate_id,
        erasedAt: e.erased_at,
        reason: e.reason,
        rounds: r.rounds,
      };
    })
    .sort((a, b) => a.erasureId - b.erasureId);
}

export function settleErasureHook(connection: SqliteConnection, erasureId: number, settlement: ErasureHookSettlement): void {
  if (settlement.state === 'done') prepared(connection, 'DELETE FROM erasure_hooks WHERE erasure_id = ?').run(erasureId);
  else if (settlement.state === 'released')
    prepared(connection, 'UPDATE erasure_hooks SET claimed_until = NULL WHERE erasure_id = ?').run(erasureId);
  else {
    prepared(
      connection,
      'UPDATE erasure_hooks SET rounds = rounds + 1, due_at = ?, claimed_until = NULL, last_error = ? WHERE erasure_id = ?',
    ).run(settlement.dueAt, settlement.error, erasureId);
  }
}
