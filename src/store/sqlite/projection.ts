// The projection's writes: the rows a batch of events touches, read and written back whole; how
// each claimed inbox row was processed; and a rebuild's reset.
import type { Statement } from 'better-sqlite3';
import type { RowKeys, RowWrites, Settlement, StoredRows } from '../store.js';
import {
  CAMPAIGN_COLUMNS,
  CANDIDATE_COLUMNS,
  CREDITS_COLUMNS,
  decodeCandidate,
  emptyCampaign,
  emptyCandidate,
  emptyCredits,
  type CampaignRow,
  type CandidateRow,
  type CreditsRow,
} from '../tables.js';
import type { SqliteDatabase } from './database.js';
import { lockTable, saveTable, versionedTable, type VersionedTable } from './versioned-table.js';

export const PROJECTED_TABLES = ['interview_responses', 'candidates', 'campaigns', 'credits'] as const;

export interface ProjectionStatements {
  campaigns: VersionedTable<CampaignRow>;
  candidates: VersionedTable<CandidateRow>;
  credits: VersionedTable<CreditsRow>;
  clearResponses: Statement;
  insertResponse: Statement;
  settle: Statement;
  settleKeepingHandlers: Statement;
  /** An erased candidate's event, redacted when processed. */
  replaceRaw: Statement;
  resetInbox: Statement;
}

export function prepareProjection(db: SqliteDatabase): ProjectionStatements {
  return {
    campaigns: versionedTable<CampaignRow>(db, 'campaigns', 'campaign_id', CAMPAIGN_COLUMNS, {
      decode: (r) => r as unknown as CampaignRow,
      empty: emptyCampaign,
      keyOf: (r) => r.campaign_id,
    }),
    candidates: versionedTable<CandidateRow>(db, 'candidates', 'candidate_id', CANDIDATE_COLUMNS, {
      decode: decodeCandidate,
      empty: emptyCandidate,
      keyOf: (r) => r.candidate_id,
    }),
    // One row, keyed 1.
    credits: versionedTable<CreditsRow>(db, 'credits', 'account', CREDITS_COLUMNS, {
      decode: (r) => {
        const { account: _account, ...row } = r;
        return row as unknown as CreditsRow;
      },
      empty: emptyCredits,
      keyOf: () => 1,
    }),
    clearResponses: db.prepare('DELETE FROM interview_responses WHERE candidate_id = ?'),
    insertResponse: db.prepare(
      'INSERT INTO interview_responses (candidate_id, position, question, answer, score, explanation) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    settle: db.prepare(
      `UPDATE inbox SET state = ?, reasons = ?, processed_at = ?, handlers_pending = ?, attempts = attempts + 1
       WHERE inbox_id = ?`,
    ),
    settleKeepingHandlers: db.prepare(
      'UPDATE inbox SET state = ?, reasons = ?, processed_at = ?, attempts = attempts + 1 WHERE inbox_id = ?',
    ),
    replaceRaw: db.prepare('UPDATE inbox SET raw = ? WHERE inbox_id = ?'),
    resetInbox: db.prepare(`UPDATE inbox SET state = 'pending' WHERE verdict = 'accepted'`),
  };
}

/** The rows of these keys, empty `absent` rows for keys with none yet. */
export function lockRows(s: ProjectionStatements, keys: RowKeys): StoredRows {
  return {
    campaigns: lockTable(s.campaigns, keys.campaigns),
    candidates: lockTable(s.candidates, keys.candidates),
    credits: keys.credits ? lockTable(s.credits, [1]).get('1') : undefined,
  };
}

/** Writes rows back whole, and replaces the interview responses of each candidate named. */
export function saveRows(s: ProjectionStatements, writes: RowWrites): void {
  saveTable(s.campaigns, writes.campaigns);
  saveTable(s.candidates, writes.candidates);
  if (writes.credits) saveTable(s.credits, [writes.credits]);
  for (const [candidateId, responses] of writes.responses) {
    s.clearResponses.run(candidateId);
    responses.forEach((r, position) => s.insertResponse.run(candidateId, position, r.question, r.answer, r.score, r.explanation));
  }
}

/** Records how claimed rows were processed; `keepHandlers` leaves their handler marks as they are (a rebuild). */
export function settle(
  s: ProjectionStatements,
  settlements: readonly Settlement[],
  at: string,
  options?: { keepHandlers?: boolean },
): void {
  for (const settlement of settlements) {
    const reasons = settlement.reasons === null ? null : JSON.stringify(settlement.reasons);
    if (options?.keepHandlers) s.settleKeepingHandlers.run(settlement.state, reasons, at, settlement.inboxId);
    else s.settle.run(settlement.state, reasons, at, settlement.handlers ? 1 : 0, settlement.inboxId);
    if (settlement.raw !== undefined) s.replaceRaw.run(settlement.raw, settlement.inboxId);
  }
}

/** Empties the projected tables and makes every accepted event pending again; how many are pending now. */
export function resetProjection(db: SqliteDatabase, s: ProjectionStatements): number {
  for (const table of PROJECTED_TABLES) db.prepare(`DELETE FROM ${table}`).run();
  return s.resetInbox.run().changes;
}
