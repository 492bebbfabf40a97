import { parseArgs } from 'node:util';
import { rebuild as rebuildStore, type RebuildSummary } from '../replay/index.js';
import { openStore } from '../store/open.js';
import { databasePath, databaseSchema, DB_FLAG, DEFAULT_DB, HELP_FLAG, parsed, type CommandIo } from './args.js';
import { displayLocation, requireDatabaseFile, smallNursery } from './database.js';
import { printJson } from './output.js';

export const REBUILD_HELP = `Usage: prequal-hooks rebuild [options]

Re-projects every event of the inbox into emptied projection tables (campaigns, candidates,
interview_responses, credits): after an upgrade that changes the projection, or to check that
the tables are what the events say. Events of kinds this version now knows are projected too.
Application handlers do not run again.

With SQLite it is one transaction: interrupted, it changes nothing, and until it ends a receiver
on the same database answers 503 to webhooks (the sender retries them). --batched commits batch
by batch instead, slower, letting a receiver write in between; interrupted, it leaves the rest
pending, for the next rebuild or the receiver to project. PostgreSQL always takes batches.

Options (environment fallback in brackets):
  --db <path|url>    SQLite file or postgres:// URL [PREQUAL_HOOKS_DB] (default ${DEFAULT_DB}); must exist
  --schema <name>    PostgreSQL: the schema of the tables [PREQUAL_HOOKS_SCHEMA] (default public)
  --batched          commit batch by batch (see above)
  --json             print the summary as JSON
  -h, --help         show this help

Progress goes to stderr after each batch; the summary (events, projected, unknown, dead) to stdout.`;

const line = (s: RebuildSummary) => `events ${s.events}, projected ${s.projected}, unknown ${s.unknown}, dead ${s.dead}`;

export async function rebuild(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parsed(() => parseArgs({ args: argv, strict: true, options: { ...HELP_FLAG, ...DB_FLAG, json: { type: 'boolean' }, batched: { type: 'boolean' } } }));
  if (values.help) {
    io.stdout.write(`${REBUILD_HELP}\n`);
    return 0;
  }
  const location = databasePath(values.db, io.env);
  requireDatabaseFile(location);
  smallNursery();
  const store = await openStore(location, databaseSchema(values.schema, io.env, location));
  const started = Date.now();
  let summary: RebuildSummary;
  try {
    summary = await rebuildStore(store, {
      bulk: values.batched !== true,
      onProgress(running) {
        const done = running.projected + running.unknown + running.dead;
        const perSecond = Math.round(done / Math.max(0.001, (Date.now() - started) / 1000));
        io.stderr.write(`prequal-hooks rebuild: ${done} of ${running.events} events (${perSecond} events/s)\n`);
      },
    });
  } finally {
    await store.close();
  }
  if (values.json) printJson(io, summary);
  else io.stdout.write(`${line(summary)} (${displayLocation(location)})\n`);
  return 0;
}
