import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from '../store/sqlite/database.js';
import { effectsOf, type Effect } from './effects.js';
import { laterThan, orderKeyOf, type ProjectableEvent } from './fold.js';
import { decodeVersions, encodeVersions } from './versions.js';
import { CAMPAIGN_COLUMNS, CANDIDATE_COLUMNS, CREDITS_COLUMNS, type InterviewResponse } from '../store/tables.js';

const BOOLEAN_COLUMNS = new Set(['is_sourced', 'call_queued', 'sms_sent']);

const toSql = (column: string, value: unknown): unknown =>
  BOOLEAN_COLUMNS.has(column) && typeof value === 'boolean' ? (value ? 1 : 0) : value;

/**
 * Last-writer-wins write of one projection table whose rows carry `field_versions`: reads only
 * the versions, and writes only the columns the effect takes (so indexes on untouched columns
 * are left alone). Statements are prepared once per set of columns.
 */
function versionedTable(db: SqliteDatabase, table: string, keyColumn: string, fields: readonly string[]) {
  const selectVersions = db.prepare(`SELECT field_versions FROM ${table} WHERE ${keyColumn} = ?`).pluck();
  const writes = new Map<string, Statement<unknown[]>>();
  const columnSet = new Set(fields);

  function statement(kind: 'insert' | 'update', columns: readonly string[]): Statement<unknown[]> {
    const cacheKey = `${kind}:${columns.join(',')}`;
    let prepared = writes.get(cacheKey);
    if (prepared === undefined) {
      prepared =
        kind === 'insert'
          ? db.prepare(
              `INSERT INTO ${table} (${[...columns, 'field_versions', keyColumn].join(', ')}) VALUES (${[...columns, '', ''].map(() => '?').join(', ')})`,
            )
          : db.prepare(`UPDATE ${table} SET ${[...columns, 'field_versions'].map((c) => `${c} = ?`).join(', ')} WHERE ${keyColumn} = ?`);
      writes.set(cacheKey, prepared);
    }
    return prepared;
  }

  return {
    /** Applies `set` to the row (created when absent) by last-writer-wins; returns the fields taken. */
    merge(key: string | number, set: Record<string, unknown>, version: string): string[] {
      const stored = selectVersions.get(key) as string | undefined;
      const versions = stored === undefined ? {} : decodeVersions(stored, fields);
      const taken = laterThan(versions, Object.keys(set), version);
      if (taken.length === 0 && stored !== undefined) return taken;
      for (const field of taken) versions[field] = version;
      const columns = taken.filter((field) => columnSet.has(field) && field !== 'responses');
      const values = columns.map((c) => toSql(c, set[c]));
      statement(stored === undefined ? 'insert' : 'update', columns).run(...values, encodeVersions(versions, fields), key);
      return taken;
    },
  };
}

/**
 * The SQL side of the projection: applies an event's effects to the tables of PROJECTION.md
 * section 4. Call inside a transaction, with the inbox row's settlement, so both commit together.
 */
export function prepareProjection(db: SqliteDatabase) {
  const campaigns = versionedTable(db, 'campaigns', 'campaign_id', CAMPAIGN_COLUMNS);
  // `responses` is versioned like a column; its rows live in interview_responses.
  const candidates = versionedTable(db, 'candidates', 'candidate_id', [...CANDIDATE_COLUMNS, 'responses']);
  const credits = versionedTable(db, 'credits', 'account', CREDITS_COLUMNS);
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
