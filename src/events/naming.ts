// Which erased people a stored body names (docs/projection.md section 8), by value, never by substring:
// a JSON body is parsed (escapes decoded) and each of its strings, at any depth, is read as words;
// a body that is not JSON is read as text the same way. A candidate id or an e-mail must be a whole
// word (`xjeanne@example.org` is not `jeanne@example.org`), a phone a whole number in any of the
// forms the service accepts (`06 12 34 56 78`, `0612345678`, `+33612345678` are one number).
import { parseJson } from './json.js';

/** A person's values as projected: what their stored rows may hold. */
export interface PersonValues {
  /** The candidate's id. */
  candidate_id: string;
  /** Their projected e-mail. */
  email: string | null;
  /** Their projected phone. */
  phone: string | null;
}

/** The values of the people being erased, normalised, each mapped to the candidates it belongs to. */
export interface NamingIndex {
  /** Candidate ids that are one word, each to itself. */
  ids: Map<string, Set<string>>;
  /** E-mails that are one word, as `emailKey` writes them, to the candidates they belong to. */
  emails: Map<string, Set<string>>;
  /** Digits of each phone in every written form (national, international with or without 00). */
  phones: Map<string, Set<string>>;
  /** Ids and e-mails that are not one word (a colon, a quote): searched as bounded text. */
  texts: Array<{ text: string; folded: boolean; candidate: string }>;
}

/** An e-mail as compared: ASCII letters folded, as SQLite's lower() does (the same on either engine). */
export function emailKey(email: string): string {
  return email.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/** The separators a written phone may hold between its digits, which both engines strip alike. */
export const PHONE_SEPARATORS = [' ', '.', '-'] as const;

/** A phone as E.164 (`+33612345678`), whatever its spacing; undefined when it is not a phone number. */
export function phoneKey(phone: string): string | undefined {
  let digits = phone.trim();
  for (const separator of PHONE_SEPARATORS) digits = digits.replaceAll(separator, '');
  if (/^\+\d{8,15}$/.test(digits)) return digits;
  if (/^00\d{8,15}$/.test(digits)) return `+${digits.slice(2)}`;
  if (/^0[1-9]\d{8}$/.test(digits)) return `+33${digits.slice(1)}`; // a French national number
  return undefined;
}

/** The ways a phone of this E.164 number is written, separators stripped. */
export function phoneForms(e164: string): string[] {
  const digits = e164.slice(1);
  return [e164, `00${digits}`, ...(digits.startsWith('33') ? [`0${digits.slice(2)}`] : [])];
}

const WORD = /[\p{L}\p{N}_]+(?:[.+@-][\p{L}\p{N}_]+)*/gu;
const ONE_WORD = /^[\p{L}\p{N}_]+(?:[.+@-][\p{L}\p{N}_]+)*$/u;
const NUMBER = /\d+(?:[ .\-\u00a0]\d+)*/g;

function add(map: Map<string, Set<string>>, key: string, candidate: string): void {
  const set = map.get(key) ?? new Set<string>();
  set.add(candidate);
  map.set(key, set);
}

/** Indexes the values of the people being erased, for `candidatesNamed`. */
export function namingIndex(people: readonly PersonValues[]): NamingIndex {
  const index: NamingIndex = { ids: new Map(), emails: new Map(), phones: new Map(), texts: [] };
  for (const { candidate_id: id, email, phone } of people) {
    if (ONE_WORD.test(id)) add(index.ids, id, id);
    else index.texts.push({ text: id, folded: false, candidate: id });
    // A value that is no e-mail or phone ("none", "unknown") would name every body that says so.
    if (email !== null && email.includes('@')) {
      if (ONE_WORD.test(email)) add(index.emails, emailKey(email), id);
      else index.texts.push({ text: emailKey(email), folded: true, candidate: id });
    }
    const e164 = phone === null ? undefined : phoneKey(phone);
    if (e164 !== undefined) for (const form of phoneForms(e164)) add(index.phones, form.slice(form.startsWith('+') ? 1 : 0), id);
  }
  return index;
}

const continues = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}_]/u.test(c);
const joins = (c: string | undefined) => c !== undefined && /[.+@-]/.test(c);

/** Whether `text` holds `needle` at `at` as a whole: nothing on either side that would continue it. */
function bounded(text: string, at: number, length: number): boolean {
  const before = text[at - 1];
  const after = text[at + length];
  if (continues(before) || (joins(before) && continues(text[at - 2]))) return false;
  return !(continues(after) || (joins(after) && continues(text[at + length + 1])));
}

function collect(found: Set<string>, candidates: Set<string> | undefined): void {
  if (candidates !== undefined) for (const c of candidates) found.add(c);
}

/** Every number written in the text, and each run of its groups (a phone may sit beside other figures). */
function scanNumbers(text: string, index: NamingIndex, found: Set<string>): void {
  for (const match of text.matchAll(NUMBER)) {
    const groups = match[0].split(/[ .\-\u00a0]/);
    for (let i = 0; i < groups.length; i++) {
      let digits = '';
      for (let j = i; j < groups.length && digits.length <= 15; j++) {
        digits += groups[j];
        collect(found, index.phones.get(digits));
      }
    }
  }
}

/** The candidates a piece of text names (a JSON string, or a body that is not JSON). */
function scanText(text: string, index: NamingIndex, found: Set<string>): void {
  for (const [word] of text.matchAll(WORD)) {
    collect(found, index.ids.get(word));
    collect(found, index.emails.get(emailKey(word)));
  }
  if (index.phones.size > 0) scanNumbers(text, index, found);
  for (const { text: needle, folded, candidate } of index.texts) {
    const haystack = folded ? emailKey(text) : text;
    for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) {
      if (bounded(haystack, at, needle.length)) {
        found.add(candidate);
        break;
      }
    }
  }
}

/** Every string (keys too) and number of a parsed JSON value, at any depth, without recursion. */
function scanValue(value: unknown, index: NamingIndex, found: Set<string>): void {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next === 'string') scanText(next, index, found);
    else if (typeof next === 'number') scanNumbers(String(next), index, found);
    else if (Array.isArray(next)) stack.push(...(next as unknown[]));
    else if (next !== null && typeof next === 'object') {
      for (const [key, member] of Object.entries(next)) stack.push(key, member);
    }
  }
}

const ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** A body that is not JSON may still hold JSON-escaped text (a truncated body): read with its escapes decoded. */
function unescaped(text: string): string {
  return text.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_, escape: string) =>
    escape.length === 5 ? String.fromCharCode(parseInt(escape.slice(1), 16)) : (ESCAPES[escape] ?? escape),
  );
}

/** The candidates of the index that a stored body names, by value. */
export function candidatesNamed(raw: Uint8Array, index: NamingIndex): Set<string> {
  const found = new Set<string>();
  const text = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8');
  let parsed: unknown;
  try {
    parsed = parseJson(text);
  } catch {
    scanText(unescaped(text), index, found);
    return found;
  }
  scanValue(parsed, index, found);
  return found;
}
