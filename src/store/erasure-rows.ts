// The stored rows that name people being erased (docs/projection.md section 8), found the same way by
// an erasure (inside its transaction, on either engine) and by an export (a plain read): an event
// about one of them by its handler key (indexed); every row about no candidate (unknown kinds,
// dead letters, bodies that are not envelopes, reconcile.* rows, and pending rows that will be one
// of these) read and matched by value in JS. Those are few, and read a page at a time. Every read is
// within one account (docs/projection.md section 9): the account is always the first parameter.
import {
  candidatesNamed,
  emailKey,
  namingIndex,
  parseEvent,
  PHONE_SEPARATORS,
  phoneForms,
  phoneKey,
  readEnvelope,
  REDACTED_REASONS_JSON,
  type PersonValues,
} from '../events/index.js';
import { bodyOf } from './bodies.js';
import { CANDIDATE_KEYS, candidateKeyBytes, candidateOfKey } from './handler-keys.js';
import { withInstantTexts } from './instants.js';
import { andKeyBlocks, placeholders, type EngineSql } from './engine-sql.js';
import type { NamingRow } from './ports/people.js';
import type { CandidateMatch } from './rows.js';

type Stored = Omit<NamingRow, 'candidates' | 'inbox_id'> & { inbox_id: number | string; codec: number | null };

/** A row as read, its body as received (the store keeps it compact: bodies.ts). */
function received({ codec, ...row }: Stored): Omit<Stored, 'codec'> {
  return { ...withInstantTexts(row), raw: bodyOf(codec, row.raw) };
}

const COLUMNS = 'inbox_id, raw, codec, kind, state, verdict, reasons, received_at, processed_at';
const KEYS_PER_READ = 50; // placeholders padded to this count: one statement text whatever the number of ids
const PAGE = 500;

/**
 * The rows matched by value, each family through its own partial index in inbox order (one state
 * at a time, so that no page sorts what the index already orders), a page at a time. A row
 * about another candidate (its handler key names them) is theirs, never touched: the person's own
 * are found by key.
 */
const SET_ASIDE = `state IN ('unknown', 'dead')`; // spelt as the partial index is, for SQLite to take it
const SCANNED = [`${SET_ASIDE} AND state = 'unknown'`, `${SET_ASIDE} AND state = 'dead'`, `state = 'pending'`, `kind LIKE 'reconcile.%'`];
/** Its two parameters are `CANDIDATE_KEYS`' bounds (handler-keys.ts), bound second and third. */
const notAnotherCandidates = (sql: EngineSql) =>
  `(handler_key IS NULL OR handler_key < ${sql.placeholder(2)} OR handler_key >= ${sql.placeholder(3)})`;

/** The projected phone with its separators stripped, in SQL both engines read alike. */
const PHONE_DIGITS_SQL = PHONE_SEPARATORS.reduce((sql, separator) => `replace(${sql}, '${separator}', '')`, 'phone');

/**
 * How an engine looks a person up by e-mail or phone among the projected candidates: the
 * parameters of its narrowing SQL (the e-mail with ASCII letters folded; the phone's written forms,
 * separators stripped, or the text as given when it is not a phone number), then the exact test.
 */
function candidateLookup(match: Extract<CandidateMatch, { email: string } | { phone: string }>): {
  parameters: string[];
  forms: string[];
  matches: (row: PersonValues) => boolean;
} {
  if ('email' in match) {
    const key = emailKey(match.email);
    return { parameters: [key], forms: [], matches: (row) => row.email !== null && emailKey(row.email) === key };
  }
  const e164 = phoneKey(match.phone);
  if (e164 === undefined) return { parameters: [match.phone], forms: [], matches: (row) => row.phone === match.phone };
  const forms = phoneForms(e164);
  return { parameters: forms, forms, matches: (row) => row.phone !== null && phoneKey(row.phone) === e164 };
}

/**
 * The account's projected candidates whose e-mail (ASCII case folded) or phone (as E.164) matches,
 * in id order: the one way an erasure (locking them, `lock`) and an export find a person. The SQL
 * narrows (lower() on both sides: SQLite's folds ASCII, PostgreSQL's more, never fewer), the lookup decides.
 */
export async function candidatesMatching(
  sql: EngineSql,
  account: string,
  match: Extract<CandidateMatch, { email: string } | { phone: string }>,
  lock: '' | ' FOR UPDATE' = '',
): Promise<PersonValues[]> {
  const lookup = candidateLookup(match);
  const where =
    'email' in match
      ? `lower(email) = lower(${sql.placeholder(2)})`
      : lookup.forms.length > 0
        ? `${PHONE_DIGITS_SQL} IN (${placeholders(sql, lookup.forms.length, 2)})`
        : `phone = ${sql.placeholder(2)}`;
  const rows = await sql.rows<PersonValues>(
    `SELECT candidate_id, email, phone FROM candidates WHERE account = ${sql.placeholder(1)} AND ${where} ORDER BY candidate_id${lock}`,
    [account, ...lookup.parameters],
  );
  return rows.filter(lookup.matches);
}

/** Whom an erasure by id reaches when no candidate row holds it: the id alone, found in stored rows. */
export function unprojected(match: CandidateMatch | { candidateIds: readonly string[] }): PersonValues[] {
  return 'candidateId' in match ? [{ candidate_id: match.candidateId, email: null, phone: null }] : [];
}

/** Whether a body is an event of a kind the service sends, with valid data: only its handler key names a person. */
function isValidWebhook(raw: Uint8Array): boolean {
  const envelope = readEnvelope(raw, 'unhashed');
  if (!envelope.ok) return false;
  const event = parseEvent(envelope.envelope);
  return event.ok && !event.event.event.startsWith('reconcile.');
}

async function byKey(sql: EngineSql, account: string, ids: readonly string[], rows: Map<number, NamingRow>): Promise<void> {
  for (let i = 0; i < ids.length; i += KEYS_PER_READ) {
    const keys = ids.slice(i, i + KEYS_PER_READ).map(candidateKeyBytes);
    const padded = [...keys, ...Array<Buffer>(KEYS_PER_READ - keys.length).fill(keys[0]!)];
    const found = await sql.rows<Stored & { handler_key: Uint8Array }>(
      `SELECT ${COLUMNS}, handler_key FROM inbox WHERE account = ${sql.placeholder(1)} AND handler_key IN (${placeholders(sql, KEYS_PER_READ, 2)})${andKeyBlocks(sql)}`,
      [account, ...padded],
    );
    for (const { handler_key: key, ...stored } of found) {
      const row = received(stored);
      const id = Number(row.inbox_id);
      const named = rows.get(id) ?? { ...row, inbox_id: id, candidates: [] };
      named.candidates.push(candidateOfKey(key)!);
      rows.set(id, named);
    }
  }
}

async function byValue(sql: EngineSql, account: string, people: readonly PersonValues[], rows: Map<number, NamingRow>): Promise<void> {
  const index = namingIndex(people);
  for (const family of SCANNED) {
    for (let after = 0; ;) {
      const page = await sql.rows<Stored>(
        `SELECT ${COLUMNS} FROM inbox WHERE account = ${sql.placeholder(1)} AND ${family} AND ${notAnotherCandidates(sql)}
         AND inbox_id > ${sql.placeholder(4)} ORDER BY inbox_id LIMIT ${PAGE}`,
        [account, CANDIDATE_KEYS.from, CANDIDATE_KEYS.to, after],
      );
      for (const row of page.map(received)) {
        const id = Number(row.inbox_id);
        if (row.state === 'pending' && isValidWebhook(row.raw)) continue;
        const named = candidatesNamed(row.raw, index);
        if (named.size === 0) continue;
        const known = rows.get(id) ?? { ...row, inbox_id: id, candidates: [] };
        known.candidates = [...new Set([...known.candidates, ...named])];
        rows.set(id, known);
      }
      if (page.length < PAGE) break;
      after = Number(page.at(-1)!.inbox_id);
    }
  }
}

/** Every stored row of the account that names one of these people, by inbox id, with the candidates it names. */
export async function rowsNaming(sql: EngineSql, account: string, people: readonly PersonValues[]): Promise<NamingRow[]> {
  const rows = new Map<number, NamingRow>();
  if (people.length === 0) return [];
  await byKey(sql, account, [...new Set(people.map((p) => p.candidate_id))], rows);
  await byValue(sql, account, people, rows);
  return [...rows.values()].sort((a, b) => a.inbox_id - b.inbox_id);
}

/**
 * What a redacted row's reasons become: a row set aside (or pending and bound to be) keeps one
 * that quotes nothing, which also tells a rebuild that it was set aside (its reduced body no longer
 * says); an event that was projected has none.
 */
export function reasonsOnceRedacted(row: Pick<NamingRow, 'state' | 'reasons' | 'raw'>): string | null {
  const setAside = row.reasons !== null || (row.state === 'pending' && !isValidWebhook(row.raw));
  return setAside ? REDACTED_REASONS_JSON : null;
}

/** An erasure's count for each candidate (a row counts for every candidate it names), and its total. */
export function erasureCounts(people: readonly PersonValues[], rows: readonly NamingRow[]) {
  const counts = new Map(people.map((p) => [p.candidate_id, 0]));
  for (const row of rows) for (const id of row.candidates) if (counts.has(id)) counts.set(id, counts.get(id)! + 1);
  const candidates = [...counts]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([candidateId, eventsRedacted]) => ({ candidateId, eventsRedacted }));
  return { found: true as const, candidates, eventsRedacted: rows.length, inboxIds: rows.map((row) => row.inbox_id) };
}
