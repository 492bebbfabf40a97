// `dump`: an account's erasures, then its stored events, one line each, in the form replay reads
// (replay/lines.ts): each body as the inbox holds it (as it was received, the bytes its signature
// covered, or redacted by an erasure), in inbox order, a batch at a time from one snapshot, each
// batch written only once the output has taken the last: memory stays flat whatever the inbox's size.
//
// An erased person's bodies are written redacted (reduced to the keys), and their erasure records
// come first, as lines of their own: replayed first, they keep those bodies from making the person's
// row again, and a later event about them is a new contact, as here (docs/projection.md section 8).
// A stored row the projection has yet to redact (a late delivery about an erased candidate, still
// pending) is written as it will be once processed. Which rows those are is decided as the
// projection decides it (events/redact.ts): a row set aside and redacted keeps redacted reasons;
// an event about an erased candidate, dated at or before the erasure (any date for reconcile.*).
import { once } from 'node:events';
import { erasureInstants, parseInstant, readEnvelope, REDACTED_REASONS_JSON, redactedBody } from '../events/index.js';
import { bodyLine, erasureLine } from '../replay/lines.js';
import { bodyOf } from '../store/bodies.js';
import { candidateOfKey } from '../store/handler-keys.js';
import { instantMs } from '../store/instants.js';
import { openSource, type Source } from './engines.js';
import { TransferError } from './errors.js';

export interface DumpOptions {
  /** The account whose events are written. */
  account: string;
  /** Only the events received at or after this instant (ms). */
  since?: number;
  /** PostgreSQL: the schema of the tables. */
  schema?: string;
  /** Stored rows per read. Default 500. */
  batchSize?: number;
}

/** What `dumpEvents` wrote. */
export interface DumpReport {
  /** Erasure lines written: one per erasure of the account, whatever `since`. */
  erasures: number;
  /** Event lines written: one per stored event. */
  events: number;
}

interface Row {
  raw: Buffer;
  kind: string | null;
  handler_key: Buffer | null;
  event_at: number | null;
  reasons: string | null;
  codec: number | null;
}

const COLUMNS = ['raw', 'kind', 'handler_key', 'event_at', 'reasons', 'codec'] as const;
const KINDS = ['bytes', 'text', 'bytes', 'integer', 'text', 'integer'] as const;

/** Whether erasure redacted the row (or will, on processing it): `erasures` maps a candidate to its latest erasure (ms). */
function erased(row: Row, erasures: ReadonlyMap<string, number>): boolean {
  if (row.reasons === REDACTED_REASONS_JSON) return true;
  const candidate = candidateOfKey(row.handler_key);
  if (candidate === null) return false;
  const erasedAt = erasures.get(candidate);
  if (erasedAt === undefined) return false;
  if (row.kind?.startsWith('reconcile.')) return true;
  let instant = row.event_at;
  if (instant === null) {
    const reading = readEnvelope(row.raw, 'unhashed');
    instant = reading.ok ? parseInstant(String(reading.envelope.timestamp)) : null;
  }
  return instant === null || instant <= erasedAt;
}

async function requireAccount(source: Source, account: string): Promise<void> {
  if (account === 'default') return;
  const found = await source.rows('SELECT account FROM accounts WHERE account = $1', [account]);
  if (found.length === 0)
    throw new TransferError(`no account "${account}" in ${source.location} ("prequal-hooks accounts list" shows them)`);
}

async function write(out: NodeJS.WritableStream, chunk: Buffer): Promise<void> {
  if (!out.write(chunk)) await once(out, 'drain');
}

/** The account's erasures, oldest first (every one: the state needs them whatever `since`). */
async function erasureRows(source: Source, account: string): Promise<Array<{ candidate_id: string; erased_at: string | Date }>> {
  return await source.rows('SELECT candidate_id, erased_at FROM erasures WHERE account = $1 ORDER BY erasure_id', [account]);
}

/** Writes the account's erasures, then its stored events, to `out`, one line each (replay/lines.ts), and says how many. */
export async function dumpEvents(location: string, out: NodeJS.WritableStream, options: DumpOptions): Promise<DumpReport> {
  const source = await openSource(location, options.schema === undefined ? {} : { schema: options.schema });
  try {
    await requireAccount(source, options.account);
    const recorded = await erasureRows(source, options.account);
    const erasures = erasureInstants(recorded);
    const report: DumpReport = { erasures: recorded.length, events: 0 };
    const lines = recorded.flatMap((row) => {
      const erasedAt = new Date(erasureInstants([row]).get(row.candidate_id)!).toISOString();
      return [erasureLine({ candidateId: row.candidate_id, erasedAt }), NEWLINE];
    });
    if (lines.length > 0) await write(out, Buffer.concat(lines));
    const since = options.since === undefined ? undefined : new Date(options.since).toISOString();
    const batches = source.batches(
      {
        table: 'inbox',
        names: COLUMNS,
        kinds: KINDS,
        order: ['inbox_id'],
        where: since === undefined ? 'account = $1' : 'account = $1 AND received_at >= $2',
      },
      // SQLite keeps the inbox's instants as Unix ms (src/store/instants.ts).
      since === undefined ? [options.account] : [options.account, source.engine === 'sqlite' ? instantMs(since) : since],
      options.batchSize ?? 500,
    );
    for await (const batch of batches) {
      const lines: Buffer[] = [];
      for (const values of batch) {
        const stored = Object.fromEntries(COLUMNS.map((name, i) => [name, values[i]])) as unknown as Row;
        const row = { ...stored, raw: bodyOf(stored.codec, stored.raw) };
        lines.push(bodyLine(erased(row, erasures) ? redactedBody(row.raw) : row.raw), NEWLINE);
        report.events++;
      }
      if (lines.length > 0) await write(out, Buffer.concat(lines));
    }
    return report;
  } finally {
    await source.close();
  }
}

const NEWLINE = Buffer.from('\n');
