import { replayInto, type ReplaySummary } from '../replay/index.js';
import { NdjsonStream } from '../replay/sources.js';
import { openStore } from '../store/open.js';
import type { ReceiverRow } from '../store/rows.js';
import { integer, UsageError } from './args.js';
import { accountStore, refuseAccountOfNoDatabase } from './account-target.js';
import { databaseOf, ACCOUNT_OPTIONS, databaseOptions, flag, flagsOnly, optionsHelp, value } from './options.js';
import { defineCommand } from './command.js';
import { count } from '../words.js';
import { displayLocation, smallNursery } from './database.js';
import { ownerJson, ownershipOf, ownerText, PROJECT_HERE_OPTION, type Ownership } from './owner.js';
import { printJson } from './output.js';

export const REPLAY_OPTIONS = {
  ...databaseOptions('creates'),
  ...ACCOUNT_OPTIONS,
  ...flagsOnly({
    'project-here': PROJECT_HERE_OPTION,
    batched: flag({ help: 'commit batch by batch (see above)' }),
    json: flag({ help: 'print the summary as JSON, with "projectedBy": "owner" (the running receiver, named in "owner") or "here"' }),
    progress: value({
      placeholder: '<n>',
      help: 'a progress line on stderr every <n> events (0: none)',
      default: 100_000,
      defaultHelp: '100000',
      parse: (text: string, name: string) => integer(name, text, 100_000),
    }),
  }),
};

export const REPLAY_HELP = `Usage: prequal-hooks replay <file|dir>... [options]

Feeds recorded events into the database through the same path as HTTP (identity,
deduplication, projection, dead letters), without signatures or a network: for backfills,
demos and tests. Replaying the same events again changes nothing.

Inputs: .ndjson files (one event per line, streamed), .json files (one event or an array
of events), folders of them (read in name order, sub-folders included), and "-": NDJSON on
standard input (what "prequal-hooks dump" writes: dump ... | replay - --db ...). An NDJSON
line {"prequal-hooks:erasure":{"candidate_id":"<id>","erased_at":"<instant>"}}, as dump
writes them, is recorded as an erasure at that instant (reason "copied by replay"): whatever
the database holds of the person is erased, their events dated at or before it change
nothing, and an erasure recorded already changes nothing.

When a receiver is running on the database ("prequal-hooks serve", or an application's
createReceiver: each keeps a heartbeat there, and counts as running while its last one is
at most 3 of its intervals old, 15 s by default), replay only stores the events, pending,
and leaves them to it: that receiver projects them and runs its handlers, as for webhooks.
The summary then says "enqueued <n> for the running receiver (pid <p> on host <h>)".
--project-here projects in this process instead, as replay does when no receiver runs (for
an offline database): the receiver's handlers then do not run for these events.

Projecting here into an empty SQLite database, replay is one bulk transaction: its cost per
event stays flat however large the input, and interrupted, it leaves the database empty; until
it ends, a receiver on the same database answers 503 (the sender retries). --batched commits
batch by batch instead (what it always does into a database that holds events, with
PostgreSQL, and when it leaves the events to a running receiver).

${optionsHelp(REPLAY_OPTIONS)}

Prints how many events were received, duplicates (already in the database), projected,
unknown (kind not known to this version) and dead (invalid), or enqueued for the running
receiver, and erasures recorded if any, and exits 0; exits 1 when an input could not be read (each one is named on stderr).`;

const PROJECTED_FIELDS = ['received', 'duplicates', 'projected', 'unknown', 'dead'] as const;

/** The summary in words: what was projected here, or what was left to the running receiver. */
function summaryLine(summary: ReplaySummary, owner: ReceiverRow | undefined): string {
  // A dump's erasures are named only when there were some: most replays have none.
  const erasures = summary.erasures > 0 ? `, erasures ${summary.erasures}` : '';
  if (owner === undefined) return PROJECTED_FIELDS.map((field) => `${field} ${summary[field]}`).join(', ') + erasures;
  return `received ${summary.received}, duplicates ${summary.duplicates}, enqueued ${summary.enqueued} for ${ownerText(owner)}, dead ${summary.dead}${erasures}`;
}

export const replay = defineCommand({
  options: REPLAY_OPTIONS,
  help: REPLAY_HELP,
  positionals: true,
  async run(command, io) {
    const { values, positionals } = command;
    if (positionals.length === 0) throw new UsageError('give at least one .json or .ndjson file, or a folder of them');
    const progressEvery = values.progress;
    const { location: dbPath, postgres } = databaseOf(command);

    smallNursery();
    const startedAt = Date.now();
    let nextProgress = progressEvery;
    refuseAccountOfNoDatabase(dbPath, values.account);
    const opened = await openStore(dbPath, postgres);
    let ownership: Ownership;
    let summary: ReplaySummary;
    try {
      const store = await accountStore(opened, dbPath, values.account);
      ownership = await ownershipOf(store, values['project-here']);
      const owner = ownership.owner;
      const inputs = positionals.map((p) =>
        p === '-' ? new NdjsonStream((io.stdin ?? process.stdin) as AsyncIterable<Buffer>, 'stdin') : p,
      );
      summary = await replayInto({ store }, inputs, {
        bulk: values.batched !== true,
        enqueue: owner !== undefined,
        onProgress(running) {
          // Called after each committed batch: report when a multiple of --progress was passed.
          if (progressEvery === 0 || running.received < nextProgress) return;
          nextProgress = (Math.floor(running.received / progressEvery) + 1) * progressEvery;
          const perSecond = Math.round(running.received / Math.max(0.001, (Date.now() - startedAt) / 1000));
          io.stderr.write(`prequal-hooks replay: ${summaryLine(running, owner)} (${perSecond} events/s)\n`);
        },
      });
    } finally {
      await opened.close();
    }

    // The readable inputs were replayed: say what became of them, then name the others (exit 1).
    const { owner, note } = ownership;
    if (values.json) printJson(io, { ...summary, projectedBy: owner === undefined ? 'here' : 'owner', owner: ownerJson(owner) });
    else io.stdout.write(`${summaryLine(summary, owner)} (${displayLocation(dbPath)})\n`);
    if (note !== undefined) io.stderr.write(`prequal-hooks replay: ${note}.\n`);
    if (summary.unknown + summary.dead > 0) {
      io.stderr.write(
        `prequal-hooks replay: ${count(summary.unknown + summary.dead, 'event')} set aside; "prequal-hooks dead-letters --db ${displayLocation(dbPath)}" lists them.\n`,
      );
    }
    for (const { origin, message } of summary.unreadable) {
      io.stderr.write(`prequal-hooks replay: could not read ${origin}: ${message}\n`);
    }
    return summary.unreadable.length > 0 ? 1 : 0;
  },
});
