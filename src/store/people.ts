// The reads of ports/people.ts, written once for both engines in their own placeholders.
import type { PersonValues } from '../events/index.js';
import { bodyOf } from './bodies.js';
import { candidateKeyBytes } from './handler-keys.js';
import { andKeyBlocks, placeholders, type EngineSql } from './engine-sql.js';
import { candidatesMatching, rowsNaming } from './erasure-rows.js';
import { candidateChangesSql } from './candidate-changes.js';
import type { ErasureRecord, ExportedResponse, PeopleReads } from './ports/people.js';
import type { StoredChange } from '../tables/changes.js';

const IDS_PER_READ = 200;

/** The reads of one account's people: every statement binds the account first. */
export function peopleReads(sql: EngineSql, account: string): PeopleReads {
  const $ = (n: number) => sql.placeholder(n);
  const rows = async <T>(text: string, parameters: readonly unknown[] = []) => await sql.rows<T>(text, parameters);
  const record = (r: ErasureRecord): ErasureRecord => ({ ...r, events_redacted: Number(r.events_redacted) });
  return {
    responses: async (candidateId) =>
      (
        await rows<ExportedResponse>(
          `SELECT position, question, answer, score, explanation FROM interview_responses
           WHERE account = ${$(1)} AND candidate_id = ${$(2)} ORDER BY position`,
          [account, candidateId],
        )
      ).map((r) => ({ ...r, position: Number(r.position) })),
    candidatesMatching: (match) => candidatesMatching(sql, account, match),
    rowsNaming: (people: readonly PersonValues[]) => rowsNaming(sql, account, people),
    changesOf: async (candidateId) => {
      const candidate = candidateChangesSql(sql, account, candidateId);
      return (
        await rows<StoredChange>(
          `${candidate.with} SELECT seq, entity, id, op, row, at, events FROM changes WHERE ${candidate.where} ORDER BY +seq`,
          candidate.parameters,
        )
      ).map((c) => ({ ...c, seq: Number(c.seq) }));
    },
    erasuresOf: async (candidateId) =>
      (
        await rows<ErasureRecord>(
          `SELECT candidate_id, erased_at, reason, events_redacted FROM erasures WHERE account = ${$(1)} AND candidate_id = ${$(2)} ORDER BY erased_at`,
          [account, candidateId],
        )
      ).map(record),
    latestErasures: async (limit) =>
      (
        await rows<ErasureRecord>(
          `SELECT candidate_id, erased_at, reason, events_redacted FROM erasures WHERE account = ${$(1)} ORDER BY erasure_id DESC LIMIT ${$(2)}`,
          [account, limit],
        )
      ).map(record),
    async erasedAmong(candidateIds) {
      const erased = new Set<string>();
      for (let i = 0; i < candidateIds.length; i += IDS_PER_READ) {
        const chunk = candidateIds.slice(i, i + IDS_PER_READ);
        const found = await rows<{ candidate_id: string }>(
          `SELECT DISTINCT candidate_id FROM erasures WHERE account = ${$(1)} AND candidate_id IN (${placeholders(sql, chunk.length, 2)})`,
          [account, ...chunk],
        );
        for (const row of found) erased.add(row.candidate_id);
      }
      return erased;
    },
    storedEventsOf: async (candidateId) =>
      (
        await rows<{ raw: Uint8Array; codec: number | null; event_at: number | string | null }>(
          `SELECT raw, codec, event_at FROM inbox WHERE account = ${$(1)} AND handler_key = ${$(2)}${andKeyBlocks(sql)}`,
          [account, candidateKeyBytes(candidateId)],
        )
      ).map((r) => ({ raw: bodyOf(r.codec, r.raw), event_at: r.event_at === null ? null : Number(r.event_at) })),
    candidateVersions: (afterId, limit) =>
      rows<{ candidate_id: string; field_versions: string }>(
        `SELECT candidate_id, field_versions FROM candidates WHERE account = ${$(1)} AND candidate_id > ${$(2)} ORDER BY candidate_id LIMIT ${$(3)}`,
        [account, afterId, limit],
      ),
  };
}
