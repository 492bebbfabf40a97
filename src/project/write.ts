import type { SqliteDatabase } from '../store/database.js';
import { effectsOf, type Effect } from './effects.js';
import { mergeEffect, orderKeyOf, type FieldVersions, type ProjectableEvent, type Versioned } from './fold.js';
import {
  CAMPAIGN_COLUMNS,
  CANDIDATE_COLUMNS,
  CREDITS_COLUMNS,
  emptyCampaign,
  emptyCandidate,
  emptyCredits,
  type InterviewResponse,
} from './rows.js';

const BOOLEAN_COLUMNS = new Set(['is_sourced', 'call_queued', 'sms_sent']);

const toSql = (column: string, value: unknown): unknown =>
  BOOLEAN_COLUMNS.has(column) && typeof value === 'boolean' ? (value ? 1 : 0) : value;
const fromSql = (column: string, value: unknown): unknown =>
  BOOLEAN_COLUMNS.has(column) && typeof value === 'number' ? value === 1 : value;

/** Read-merge-write of one projection table whose rows carry `field_versions`. */
function versionedTable<T extends object>(
  db: SqliteDatabase,
  table: string,
  keyColumn: string,
  columns: readonly string[],
  empty: (key: string) => T,
) {
  const select = db.prepare(`SELECT ${columns.join(', ')}, field_versions FROM ${table} WHERE ${keyColumn} = ?`);
  const upsert = db.prepare(
    `INSERT INTO ${table} (${keyColumn}, ${columns.join(', ')}, field_versions)
     VALUES (${['?', ...columns.map(() => '?'), '?'].join(', ')})
     ON CONFLICT (${keyColumn}) DO UPDATE SET ${[...columns, 'field_versions'].map((c) => `${c} = excluded.${c}`).join(', ')}`,
  );

  function read(key: string | number): Versioned<T> | undefined {
    const found = select.get(key) as Record<string, unknown> | undefined;
    if (found === undefined) return undefined;
    const row = empty(String(key)) as Record<string, unknown>;
    for (const column of columns) row[column] = fromSql(column, found[column]);
    return { row: row as T, versions: JSON.parse(found.field_versions as string) as FieldVersions };
  }

  return {
    /** Merges `set` into the row (created when absent); returns the columns that changed. */
    merge(key: string | number, set: Record<string, unknown>, version: string): string[] {
      const current = read(key);
      const { next, changed } = mergeEffect(current ?? { row: empty(String(key)), versions: {} }, set, version);
      if (changed.length > 0 || current === undefined) {
        const row = next.row as Record<string, unknown>;
        upsert.run(key, ...columns.map((c) => toSql(c, row[c])), JSON.stringify(next.versions));
      }
      return changed;
    },
  };
}

/**
 * The SQL side of the projection: applies an event's effects to the tables of PROJECTION.md
 * section 4. Call inside a transaction, with the inbox row's settlement, so both commit together.
 */
export function prepareProjection(db: SqliteDatabase) {
  const campaigns = versionedTable(db, 'campaigns', 'campaign_id', CAMPAIGN_COLUMNS, emptyCampaign);
  const candidates = versionedTable(db, 'candidates', 'candidate_id', CANDIDATE_COLUMNS, emptyCandidate);
  const credits = versionedTable(db, 'credits', 'account', CREDITS_COLUMNS, emptyCredits);
  const ensureCampaign = db.prepare('INSERT INTO campaigns (campaign_id) VALUES (?) ON CONFLICT (campaign_id) DO NOTHING');
  const clearResponses = db.prepare('DELETE FROM interview_responses WHERE candidate_id = ?');
  const insertResponse = db.prepare(
    'INSERT INTO interview_responses (candidate_id, position, question, answer, score, explanation) VALUES (?, ?, ?, ?, ?, ?)',
  );

  function applyEffect(effect: Effect, version: string): void {
    switch (effect.table) {
      case 'campaigns':
        if (Object.keys(effect.set).length === 0) ensureCampaign.run(effect.key);
        else campaigns.merge(effect.key, effect.set, version);
        return;
      case 'candidates': {
        const { responses, ...set } = effect.set;
        // `responses` is versioned like a column; its rows live in interview_responses.
        const changed = candidates.merge(effect.key, responses === undefined ? set : { ...set, responses: null }, version);
        if (responses !== undefined && changed.includes('responses')) replaceResponses(effect.key, responses);
        return;
      }
      case 'credits':
        credits.merge(1, effect.set, version);
        return;
    }
  }

  function replaceResponses(candidateId: string, responses: InterviewResponse[]): void {
    clearResponses.run(candidateId);
    responses.forEach((r, position) =>
      insertResponse.run(candidateId, position, r.question, r.answer, r.score, r.explanation),
    );
  }

  return {
    apply(e: ProjectableEvent): void {
      const version = orderKeyOf(e);
      for (const effect of effectsOf(e.event, e.instant)) applyEffect(effect, version);
    },
  };
}

export type Projection = ReturnType<typeof prepareProjection>;
