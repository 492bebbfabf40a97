// What is held about one candidate (GDPR article 15): the projected row, the interview responses,
// every stored row naming them (the rows an erasure would redact) with its state and times, and
// the erasure record if erased.
import type { PersonValues } from '../events/index.js';
import { rowsNaming } from '../store/erasure-rows.js';
import { decodeCandidate, type CandidateRow } from '../store/tables.js';
import type { Store } from '../store/store.js';
import { CANDIDATE_SELECT } from '../project/read.js';

export interface StoredEventExport {
  inbox_id: number;
  kind: string | null;
  state: string;
  verdict: string;
  received_at: string;
  processed_at: string | null;
  /** The body as stored (redacted once the person was erased). */
  body: unknown;
}

export interface CandidateExport {
  candidate_id: string;
  exported_at: string;
  candidate: CandidateRow | null;
  interview_responses: Array<{
    position: number;
    question: string | null;
    answer: string | null;
    score: number | null;
    explanation: string | null;
  }>;
  events: StoredEventExport[];
  erasures: Array<{ erased_at: string; reason: string; events_redacted: number }>;
}

function bodyOf(raw: Uint8Array): unknown {
  const text = Buffer.from(raw).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Everything held about one candidate, as one JSON-ready document. */
export async function exportCandidate(store: Store, candidateId: string, now: () => number = Date.now): Promise<CandidateExport> {
  const [row] = await store.select(`SELECT ${CANDIDATE_SELECT} FROM candidates WHERE candidate_id = ?`, [candidateId]);
  const responses = await store.select<CandidateExport['interview_responses'][number]>(
    'SELECT position, question, answer, score, explanation FROM interview_responses WHERE candidate_id = ? ORDER BY position',
    [candidateId],
  );
  // Exactly the rows an erasure of this candidate would redact (src/store/erasure-rows.ts).
  const person: PersonValues = {
    candidate_id: candidateId,
    email: (row?.email as string | null) ?? null,
    phone: (row?.phone as string | null) ?? null,
  };
  const events = await rowsNaming((sql, parameters) => store.select(sql, parameters), [person]);
  const erasures = await store.select<{ erased_at: string; reason: string; events_redacted: number }>(
    'SELECT erased_at, reason, events_redacted FROM erasures WHERE candidate_id = ? ORDER BY erased_at',
    [candidateId],
  );
  return {
    candidate_id: candidateId,
    exported_at: new Date(now()).toISOString(),
    candidate: row === undefined ? null : decodeCandidate(row),
    interview_responses: responses.map((r) => ({ ...r, position: Number(r.position) })),
    events: events.map((e) => ({
      inbox_id: Number(e.inbox_id),
      kind: e.kind,
      state: e.state,
      verdict: e.verdict,
      received_at: e.received_at,
      processed_at: e.processed_at,
      body: bodyOf(e.raw),
    })),
    erasures: erasures.map((e) => ({ erased_at: e.erased_at, reason: e.reason, events_redacted: Number(e.events_redacted) })),
  };
}
