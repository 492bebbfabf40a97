import { rebuild as rebuildStore, type RebuildSummary } from '../replay/index.js';
import { openStore } from '../store/open.js';
import { accountStore } from './account-target.js';
import { databaseOf, ACCOUNT_OPTIONS, databaseOptions, flag, flagsOnly, optionsHelp } from './options.js';
import { defineCommand } from './command.js';
import { displayLocation, requireDatabaseFile, smallNursery } from './database.js';
import { printJson } from './output.js';

export const REBUILD_OPTIONS = {
  ...databaseOptions('must exist'),
  ...ACCOUNT_OPTIONS,
  ...flagsOnly({
    batched: flag({ help: 'commit batch by batch (see above)' }),
    json: flag({ help: 'print the summary as JSON' }),
  }),
};

export const REBUILD_HELP = `Usage: prequal-hooks rebuild [options]

Re-projects every event of the inbox into emptied projection tables (campaigns, candidates,
interview_responses, credits): after an upgrade that changes the projection, or to check that
the tables are what the events say. Events of kinds this version now knows are projected too.
Application handlers do not run again.

With SQLite it is one transaction: interrupted, it changes nothing, and until it ends a receiver
on the same database answers 503 to webhooks (the sender retries them). --batched commits batch
by batch instead, slower, letting a receiver write in between; interrupted, it leaves the rest
pending, for the next rebuild or the receiver to project. PostgreSQL always takes batches.

${optionsHelp(REBUILD_OPTIONS)}

Progress goes to stderr after each batch; the summary (events, projected, unknown, dead) to stdout.`;

const line = (s: RebuildSummary) => `events ${s.events}, projected ${s.projected}, unknown ${s.unknown}, dead ${s.dead}`;

export const rebuild = defineCommand({
  options: REBUILD_OPTIONS,
  help: REBUILD_HELP,
  async run(command, io) {
    const { values } = command;
    const { location, postgres } = databaseOf(command);
    requireDatabaseFile(location);
    smallNursery();
    const opened = await openStore(location, postgres);
    const started = Date.now();
    let summary: RebuildSummary;
    try {
      const store = await accountStore(opened, location, values.account);
      summary = await rebuildStore(store, {
        bulk: values.batched !== true,
        onProgress(running) {
          const done = running.projected + running.unknown + running.dead;
          const perSecond = Math.round(done / Math.max(0.001, (Date.now() - started) / 1000));
          io.stderr.write(`prequal-hooks rebuild: ${done} of ${running.events} events (${perSecond} events/s)\n`);
        },
      });
    } finally {
      await opened.close();
    }
    if (values.json) printJson(io, summary);
    else io.stdout.write(`${line(summary)} (${displayLocation(location)})\n`);
    return 0;
  },
});
