// The projection's writes: the rows a batch of events touches, read and written back whole; how
// each claimed inbox row was processed; and a rebuild's reset. Rows are the account's a statement
// binds; inbox rows are settled by id, whatever their account.
import type { Statement } from 'better-sqlite3';
import type { Settlement } from '../rows.js';
import type { RowKeys, RowWrites, StoredRows } from '../../tables/stored.js';
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
} from '../../tables/rows.js';
import type { SqliteDatabase } from './database.js';
import { prepareRecount, recount, type RecountStatements } from './counters.js';
import { storedBody } from '../bodies.js';
import { lockTable, saveTable, versionedTable, type VersionedTable } from './versioned-table.js';
import { instantMs } from '../instants.js';

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
  /** The account's rows of each projected table, by table. */
  clearTables: Statement[];
  recount: RecountStatements;
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
    // One row per account, keyed by it.
    credits: versionedTable<CreditsRow>(db, 'credits', null, CREDITS_COLUMNS, {
      decode: (r) => r as unknown as CreditsRow,
      empty: emptyCredits,
      keyOf: () => '',
    }),
    clearResponses: db.prepare('DELETE FROM interview_responses WHERE account = ? AND candidate_id = ?'),
    insertResponse: db.prepare(
      'INSERT INTO interview_responses (account, candidate_id, position, question, answer, score, explanation) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    settle: db.prepare(
      `UPDATE inbox SET state = ?, reasons = ?, processed_at = ?, handlers_pending = ?, attempts = attempts + 1
       WHERE inbox_id = ?`,
    ),
    settleKeepingHandlers: db.prepare(
      'UPDATE inbox SET state = ?, reasons = ?, processed_at = ?, attempts = attempts + 1 WHERE inbox_id = ?',
    ),
    replaceRaw: db.prepare('UPDATE inbox SET raw = ?, codec = ? WHERE inbox_id = ?'),
    resetInbox: db.prepare(`UPDATE inbox SET state = 'pending' WHERE account = ? AND verdict = 'accepted'`),
    clearTables: PROJECTED_TABLES.map((table) => db.prepare(`DELETE FROM ${table} WHERE account = ?`)),
    recount: prepareRecount(db),
  };
}

/** The account's rows of these keys, empty `absent` rows for keys with none yet. */
export function lockRows(s: ProjectionStatements, account: string, keys: RowKeys): StoredRows {
  return {
    campaigns: lockTable(s.campaigns, account, keys.campaigns),
    candidates: lockTable(s.candidates, account, keys.candidates),
    credits: keys.credits ? lockTable(s.credits, account, ['']).get('') : undefined,
  };
}

/** Writes the account's rows back whole, and replaces the interview responses of each candidate named. */
export function saveRows(s: ProjectionStatements, account: string, writes: RowWrites): void {
  saveTable(s.campaigns, account, writes.campaigns);
  saveTable(s.candidates, account, writes.candidates);
  if (writes.credits) saveTable(s.credits, account, [writes.credits]);
  for (const [candidateId, responses] of writes.responses) {
    s.clearResponses.run(account, candidateId);
    responses.forEach((r, position) => s.insertResponse.run(account, candidateId, position, r.question, r.answer, r.score, r.explanation));
  }
}

/** Records how claimed rows were processed; `keepHandlers` leaves their handler marks as they are (a rebuild). */
export function settle(
  s: ProjectionStatements,
  settlements: readonly Settlement[],
  at: string,
  options?: { keepHandlers?: boolean },
): void {
  const processedAt = instantMs(at);
  for (const settlement of settlements) {
    const reasons = settlement.reasons === null ? null : JSON.stringify(settlement.reasons);
    if (options?.keepHandlers) s.settleKeepingHandlers.run(settlement.state, reasons, processedAt, settlement.inboxId);
    else s.settle.run(settlement.state, reasons, processedAt, settlement.handlers ? 1 : 0, settlement.inboxId);
    if (settlement.raw !== undefined) {
      const body = storedBody(settlement.raw);
      s.replaceRaw.run(body.bytes, body.codec, settlement.inboxId);
    }
  }
}

/**
 * Empties the account's projected rows and makes its accepted events pending again; how many are
 * pending now. Its counters are counted again from the rows (the triggers kept them; a rebuild
 * also mends any that were not).
 */
export function resetProjection(s: ProjectionStatements, account: string): number {
  for (const clear of s.clearTables) clear.run(account);
  const pending = s.resetInbox.run(account).changes;
  recount(s.recount, account);
  return pending;
}
