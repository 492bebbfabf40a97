// `dump`: an account's stored events, one line each, each body as it was received (the bytes its
// signature covered), in the form replay reads (replay/lines.ts), in inbox order, a batch at a time
// from one snapshot, each batch written only once the output has taken the last: memory stays flat
// whatever the inbox's size.
//
// An erased person's events are left out. Their stored bodies are already redacted (reduced to the
// keys), but a replay of those reduced bodies into a database without the erasure's record would
// make the person's row again, from the keys alone; left out, a replay gives the same state, and
// the person appears nowhere in the dump. Which rows an erasure redacted is decided as the
// projection decides it (events/redact.ts): a row set aside and redacted keeps redacted reasons;
// an event about an erased candidate, dated at or before the erasure (any date for reconcile.*).
import { once } from 'node:events';
import { erasureInstants, parseInstant, readEnvelope, REDACTED_REASONS_JSON } from '../events/index.js';
import { bodyLine } from '../replay/lines.js';
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
  /** Lines written: one per stored event. */
  events: number;
  /** Stored rows left out: the events of erased people. */
  erased: number;
}

interface Row {
  raw: Buffer;
  kind: string | null;
  handler_key: string | null;
  event_at: number | null;
  reasons: string | null;
}

const COLUMNS = ['raw', 'kind', 'handler_key', 'event_at', 'reasons'] as const;
const KINDS = ['bytes', 'text', 'text', 'integer', 'text'] as const;

/** Whether erasure redacted the row (or would, on processing it): `erasures` maps a candidate to its latest erasure (ms). */
function erased(row: Row, erasures: ReadonlyMap<string, number>): boolean {
  if (row.reasons === REDACTED_REASONS_JSON) return true;
  if (row.handler_key === null || !row.handler_key.startsWith('candidate:')) return false;
  const erasedAt = erasures.get(row.handler_key.slice('candidate:'.length));
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

/** Writes the account's stored events to `out`, one line each (replay/lines.ts), and says how many. */
export async function dumpEvents(location: string, out: NodeJS.WritableStream, options: DumpOptions): Promise<DumpReport> {
  const source = await openSource(location, options.schema === undefined ? {} : { schema: options.schema });
  try {
    await requireAccount(source, options.account);
    const erasures = erasureInstants(
      await source.rows<{ candidate_id: string; erased_at: string }>('SELECT candidate_id, erased_at FROM erasures WHERE account = $1', [
        options.account,
      ]),
    );
    const since = options.since === undefined ? undefined : new Date(options.since).toISOString();
    const report: DumpReport = { events: 0, erased: 0 };
    const batches = source.batches(
      {
        table: 'inbox',
        names: COLUMNS,
        kinds: KINDS,
        order: ['inbox_id'],
        where: since === undefined ? 'account = $1' : 'account = $1 AND received_at >= $2',
      },
      since === undefined ? [options.account] : [options.account, since],
      options.batchSize ?? 500,
    );
    for await (const batch of batches) {
      const lines: Buffer[] = [];
      for (const values of batch) {
        const row = Object.fromEntries(COLUMNS.map((name, i) => [name, values[i]])) as unknown as Row;
        if (erased(row, erasures)) {
          report.erased++;
          continue;
        }
        lines.push(bodyLine(row.raw), NEWLINE);
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
