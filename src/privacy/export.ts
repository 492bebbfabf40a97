// What is held about one candidate (GDPR article 15): the projected row, the interview responses,
// every stored row naming them (the rows an erasure would redact) with its state and times, the
// changes the feed keeps about them, and the erasure record if erased.
import type { PersonValues } from '../events/index.js';
import { changeOf, type Change } from '../project/changes.js';
import type { ErasureRecord, ExportedResponse } from '../store/ports/people.js';
import type { CandidateRow } from '../tables/rows.js';
import type { CandidateMatch } from '../store/rows.js';
import type { StoreHandle } from '../store/handle.js';
import { storePorts } from '../store/store.js';
import type { Store } from '../store/store.js';
import { checkedMatch, described, UnknownCandidateError } from './erase.js';

/** One stored row that names the candidate, as an export shows it. */
export interface StoredEventExport {
  /** Its inbox row. */
  inbox_id: number;
  /** The body's `event`, as sent. */
  kind: string | null;
  /** How far it was processed (`projected`, `pending`, `unknown`, `dead`). */
  state: string;
  /** How its body read (`accepted`, `invalid_json`, `invalid_envelope`). */
  verdict: string;
  /** When it was received: UTC ISO 8601. */
  received_at: string;
  /** When it was processed: UTC ISO 8601; null while pending. */
  processed_at: string | null;
  /** The body as stored (redacted once the person was erased). */
  body: unknown;
}

/** Everything stored about one candidate (GDPR article 15): `exportCandidate` and `receiver.exportCandidate`. */
export interface CandidateExport {
  /** The candidate. */
  candidate_id: string;
  /** When the export was made: UTC ISO 8601. */
  exported_at: string;
  /** The projected row; null when there is none (erased, or never projected). */
  candidate: CandidateRow | null;
  /** Their interview responses, in the order asked. */
  interview_responses: ExportedResponse[];
  /** Every stored row that names them, by id, e-mail or phone. */
  events: StoredEventExport[];
  /** The changes the feed still keeps about them (and destinations may have received), in `seq` order. */
  changes: Change[];
  /** Their erasures, from the audit trail. */
  erasures: Array<Omit<ErasureRecord, 'candidate_id'>>;
}

function bodyOf(raw: Uint8Array): unknown {
  const text = Buffer.from(raw).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** What an export reads: the projected rows, and what is held about a person. Never a write. */
type ExportReads = Pick<Store, 'people' | 'projected'>;

/** Everything held about one candidate, as one JSON-ready document. */
export async function exportCandidate(handle: StoreHandle, candidateId: string, now: () => number = Date.now): Promise<CandidateExport> {
  return await candidateDocument(storePorts(handle), candidateId, now);
}

async function candidateDocument(store: ExportReads, candidateId: string, now: () => number): Promise<CandidateExport> {
  const row = await store.projected.candidate(candidateId);
  const responses = await store.people.responses(candidateId);
  // Exactly the rows an erasure of this candidate would redact (src/store/erasure-rows.ts).
  const person: PersonValues = { candidate_id: candidateId, email: row?.email ?? null, phone: row?.phone ?? null };
  const events = await store.people.rowsNaming([person]);
  const erasures = await store.people.erasuresOf(candidateId);
  const changes = await store.people.changesOf(candidateId);
  return {
    candidate_id: candidateId,
    exported_at: new Date(now()).toISOString(),
    candidate: row ?? null,
    interview_responses: responses,
    events: events.map((e) => ({
      inbox_id: e.inbox_id,
      kind: e.kind,
      state: e.state,
      verdict: e.verdict,
      received_at: e.received_at,
      processed_at: e.processed_at,
      body: bodyOf(e.raw),
    })),
    changes: changes.map(changeOf),
    erasures: erasures.map((e) => ({ erased_at: e.erased_at, reason: e.reason, events_redacted: e.events_redacted })),
  };
}

export interface PersonExport {
  exported_at: string;
  /** Each candidate the match found, in id order (a person who applied twice has two ids). */
  candidates: CandidateExport[];
}

/**
 * Everything held about a person: the candidate `candidateId`, or every candidate whose projected
 * e-mail (any case) or phone (any spacing) matches, found as an erasure finds them. Rejects with
 * UnknownCandidateError when the e-mail or phone matches no candidate (never repeating it).
 */
export async function exportPerson(store: ExportReads, match: CandidateMatch, now: () => number = Date.now): Promise<PersonExport> {
  const request = checkedMatch(match);
  const ids =
    'candidateId' in request
      ? [request.candidateId]
      : (await store.people.candidatesMatching(request)).map((person) => person.candidate_id);
  if (ids.length === 0) throw new UnknownCandidateError(described(request));
  const candidates: CandidateExport[] = [];
  for (const id of ids) candidates.push(await candidateDocument(store, id, now));
  return { exported_at: new Date(now()).toISOString(), candidates };
}
