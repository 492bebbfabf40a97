// A handler key (`subjectKey`: `candidate:<id>`, `campaign:<id>` or `credits`) is text above the
// store; the inbox keeps it as bytes, a tag then the id, which for the service's candidates (a
// UUID) is 17 bytes against 46, in the row and in the index that finds a person's events:
//
//   00                 credits
//   01 + 16 bytes      candidate:<a UUID in lowercase hex, the form the service sends>
//   02 + UTF-8         candidate:<any other id>
//   03 + UTF-8         campaign:<id>
//   04 + UTF-8         any other key, whole
//
// A candidate's keys are the ones from 01 up to (not including) 03, so both engines find the rows
// that name a candidate by comparing bytes (`CANDIDATE_KEYS`). The migrations that rewrote the text
// keys (SQLite 026, PostgreSQL 024) spell the same encoding in SQL.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CANDIDATE = 'candidate:';
const CAMPAIGN = 'campaign:';

const Tag = { Credits: 0, CandidateUuid: 1, Candidate: 2, Campaign: 3, Other: 4 } as const;
type Tag = (typeof Tag)[keyof typeof Tag];

function tagged(tag: Tag, text: string): Buffer {
  const bytes = Buffer.allocUnsafe(1 + Buffer.byteLength(text));
  bytes[0] = tag;
  bytes.write(text, 1);
  return bytes;
}

/** A candidate's key as stored. */
export function candidateKeyBytes(candidateId: string): Buffer {
  if (!UUID.test(candidateId)) return tagged(Tag.Candidate, candidateId);
  const bytes = Buffer.allocUnsafe(17);
  bytes[0] = Tag.CandidateUuid;
  bytes.write(candidateId.replaceAll('-', ''), 1, 'hex');
  return bytes;
}

/** A handler key as the inbox stores it. */
export function handlerKeyBytes(key: string): Buffer;
export function handlerKeyBytes(key: string | null | undefined): Buffer | null;
export function handlerKeyBytes(key: string | null | undefined): Buffer | null {
  if (key === null || key === undefined) return null;
  if (key === 'credits') return Buffer.of(Tag.Credits);
  if (key.startsWith(CANDIDATE)) return candidateKeyBytes(key.slice(CANDIDATE.length));
  if (key.startsWith(CAMPAIGN)) return tagged(Tag.Campaign, key.slice(CAMPAIGN.length));
  return tagged(Tag.Other, key);
}

function bytesOf(stored: unknown): Buffer | string | null {
  if (stored === null || stored === undefined) return null;
  if (typeof stored === 'string') return stored; // written as text by hand: read as it is
  return Buffer.isBuffer(stored) ? stored : Buffer.from(stored as Uint8Array);
}

/** The candidate a stored key names, or null (another subject, or none). */
export function candidateOfKey(stored: unknown): string | null {
  const bytes = bytesOf(stored);
  if (bytes === null) return null;
  if (typeof bytes === 'string') return bytes.startsWith(CANDIDATE) ? bytes.slice(CANDIDATE.length) : null;
  if (bytes[0] === Tag.Candidate) return bytes.toString('utf8', 1);
  if (bytes[0] !== Tag.CandidateUuid || bytes.length !== 17) return null;
  const hex = bytes.toString('hex', 1);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A stored key as text (`subjectKey`'s form). */
export function handlerKeyText(stored: unknown): string | null {
  const bytes = bytesOf(stored);
  if (bytes === null || typeof bytes === 'string') return bytes;
  switch (bytes[0]) {
    case Tag.Credits:
      return 'credits';
    case Tag.CandidateUuid:
    case Tag.Candidate:
      return `${CANDIDATE}${candidateOfKey(bytes)}`;
    case Tag.Campaign:
      return `${CAMPAIGN}${bytes.toString('utf8', 1)}`;
    default:
      return bytes.toString('utf8', 1);
  }
}

/** The bounds of the keys that name a candidate: `key >= from AND key < to`, bound as parameters. */
export const CANDIDATE_KEYS = { from: Buffer.of(Tag.CandidateUuid), to: Buffer.of(Tag.Campaign) } as const;

/**
 * SQLite's index by handler key (`inbox_by_key`, migration 027) is keyed by the account, then the
 * block of 4,096 inbox ids a row falls in, then the key, so that intake writes into the last
 * block's leaves rather than a random leaf a row. A lookup by key ANDs this condition with
 * `account = ?` and `handler_key = ?` (or `IN`): it probes each block from the inbox's first id to
 * its last. PostgreSQL keeps its index by key, and needs no such condition.
 */
export const KEY_BLOCKS_SQL = `(inbox_id >> 12) IN (WITH RECURSIVE blocks(b) AS (
    SELECT (SELECT MIN(inbox_id) FROM inbox) >> 12
    UNION ALL SELECT b + 1 FROM blocks WHERE b < (SELECT MAX(inbox_id) FROM inbox) >> 12) SELECT b FROM blocks)`;
