import type { StoredChange } from '../../tables/changes.js';
// What is read about one person for a data-protection request (export, retention) and the audit
// trail of erasures: the plain reads of privacy/ and of the console, outside any transaction.
import type { PersonValues } from '../../events/index.js';

/** A stored row that names some of the people, and which (src/store/erasure-rows.ts finds them). */
export interface NamingRow {
  inbox_id: number;
  raw: Uint8Array;
  kind: string | null;
  /** The row's InboxState, spelt out: this file stays a leaf that store.ts imports. */
  state: 'pending' | 'projected' | 'unknown' | 'dead';
  verdict: string;
  reasons: string | null;
  received_at: string;
  processed_at: string | null;
  candidates: string[];
}

/** An interview response as an export shows it, with its position. */
export interface ExportedResponse {
  /** Its place in the interview, from 0. */
  position: number;
  /** The question asked. */
  question: string | null;
  /** The candidate's answer. */
  answer: string | null;
  /** The answer's score, 0 to 10. */
  score: number | null;
  /** Why the answer got its score. */
  explanation: string | null;
}

/** One row of the audit trail: never a name, e-mail or phone. */
export interface ErasureRecord {
  /** The candidate erased. */
  candidate_id: string;
  /** UTC ISO 8601 with milliseconds. */
  erased_at: string;
  /** The operator's reason. */
  reason: string;
  /** Stored rows redacted by the erasure. */
  events_redacted: number;
}

export interface PeopleReads {
  /** The projected candidates whose e-mail (any case) or phone (any spacing) this is, in id order: whom an erasure by it reaches. */
  candidatesMatching(match: { email: string } | { phone: string }): Promise<PersonValues[]>;
  /** The candidate's interview responses, by position. */
  responses(candidateId: string): Promise<ExportedResponse[]>;
  /** Every stored row naming one of these people: exactly those an erasure of them would redact. */
  rowsNaming(people: readonly PersonValues[]): Promise<NamingRow[]>;
  /** The candidate's changes still kept in the feed (docs/projection.md section 10), in `seq` order. */
  changesOf(candidateId: string): Promise<StoredChange[]>;
  /** The candidate's erasures, oldest first. */
  erasuresOf(candidateId: string): Promise<ErasureRecord[]>;
  /** The latest erasures, newest first (by when recorded). */
  latestErasures(limit: number): Promise<ErasureRecord[]>;
  /** Which of these candidates were ever erased. */
  erasedAmong(candidateIds: readonly string[]): Promise<Set<string>>;
  /** The stored events keyed to the candidate, with the instant of their timestamp (ms; null for rows stored before it was kept). */
  storedEventsOf(candidateId: string): Promise<Array<{ raw: Uint8Array; event_at: number | null }>>;
  /** A page of projected candidates after `afterId` in id order, with their encoded field versions. */
  candidateVersions(afterId: string, limit: number): Promise<Array<{ candidate_id: string; field_versions: string }>>;
}
