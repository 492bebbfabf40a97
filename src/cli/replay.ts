import { parseArgs } from 'node:util';
import { replay as replayInto, ReplayInputError, type ReplaySummary } from '../replay/index.js';
import { count } from '../words.js';
import { databasePath, databaseSchema, DB_FLAG, DEFAULT_DB, HELP_FLAG, integer, parsed, UsageError, type CommandIo } from './args.js';
import { displayLocation, smallNursery } from './database.js';
import { printJson } from './output.js';

export const REPLAY_HELP = `Usage: prequal-hooks replay <file|dir>... [options]

Feeds recorded events into the database through the same path as HTTP (identity,
deduplication, projection, dead letters), without signatures or a network: for backfills,
demos and tests. Replaying the same events again changes nothing.

Inputs: .ndjson files (one event per line, streamed), .json files (one event or an array
of events), and folders of them (read in name order, sub-folders included).

Into an empty SQLite database the replay is one bulk transaction: its cost per event stays flat
however large the input, and interrupted, it leaves the database empty; until it ends, a receiver
on the same database answers 503 (the sender retries). --batched commits batch by batch instead
(what it always does into a database that holds events, and with PostgreSQL).

Options (environment fallback in brackets):
  --db <path|url>    SQLite file (folder created) or postgres:// URL [PREQUAL_HOOKS_DB]
                     (default ${DEFAULT_DB})
  --schema <name>    PostgreSQL: the schema of the tables [PREQUAL_HOOKS_SCHEMA] (default public)
  --batched          commit batch by batch (see above)
  --json             print the summary as JSON
  --progress <n>     a progress line on stderr every <n> events (default 100000; 0: none)
  -h, --help         show this help

Prints how many events were received, duplicates (already in the database), projected,
unknown (kind not known to this version) and dead (invalid), and exits 0; exits 1 when
an input could not be read (each one is named on stderr).`;

const SUMMARY_FIELDS = ['received', 'duplicates', 'projected', 'unknown', 'dead'] as const;

function summaryLine(summary: ReplaySummary): string {
  return SUMMARY_FIELDS.map((field) => `${field} ${summary[field]}`).join(', ');
}

export async function replay(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parsed(() =>
    parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: { ...HELP_FLAG, ...DB_FLAG, json: { type: 'boolean' }, progress: { type: 'string' }, batched: { type: 'boolean' } },
    }),
  );
  if (values.help) {
    io.stdout.write(`${REPLAY_HELP}\n`);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('give at least one .json or .ndjson file, or a folder of them');
  const progressEvery = integer('--progress', values.progress, 100_000);
  const dbPath = databasePath(values.db, io.env);

  smallNursery();
  const startedAt = Date.now();
  let nextProgress = progressEvery;
  let summary: ReplaySummary;
  try {
    summary = await replayInto(positionals, {
      database: dbPath,
      ...databaseSchema(values.schema, io.env, dbPath),
      bulk: values.batched !== true,
      onProgress(running) {
        // Called after each committed batch: report when a multiple of --progress was passed.
        if (progressEvery === 0 || running.received < nextProgress) return;
        nextProgress = (Math.floor(running.received / progressEvery) + 1) * progressEvery;
        const perSecond = Math.round(running.received / Math.max(0.001, (Date.now() - startedAt) / 1000));
        io.stderr.write(`prequal-hooks replay: ${summaryLine(running)} (${perSecond} events/s)\n`);
      },
    });
  } catch (error) {
    // The readable inputs were replayed: say what became of them, then name the others (exit 1).
    if (!(error instanceof ReplayInputError)) throw error;
    summary = error.summary;
  }

  if (values.json) printJson(io, summary);
  else io.stdout.write(`${summaryLine(summary)} (${displayLocation(dbPath)})\n`);
  if (summary.unknown + summary.dead > 0) {
    io.stderr.write(`prequal-hooks replay: ${count(summary.unknown + summary.dead, 'event')} set aside; "prequal-hooks dead-letters --db ${displayLocation(dbPath)}" lists them.\n`);
  }
  for (const { origin, message } of summary.unreadable) {
    io.stderr.write(`prequal-hooks replay: could not read ${origin}: ${message}\n`);
  }
  return summary.unreadable.length > 0 ? 1 : 0;
}
