// `prequal-hooks changes`: an account's changes after a cursor (docs/changes.md), one a line, and
// with --follow the ones committed later, by any process on the database, until SIGINT or SIGTERM.
import { ChangesDroppedError, CursorAheadError, followChanges, type Change } from '../query/index.js';
import { CommandError, integer, type CommandIo } from './args.js';
import { accountStore } from './account-target.js';
import { defineCommand } from './command.js';
import { openForReading } from './database.js';
import { ACCOUNT_OPTIONS, databaseOf, databaseOptions, flag, flagsOnly, FORMAT_OPTIONS, optional, optionsHelp } from './options.js';
import { outputFormat } from './output.js';

export const CHANGES_OPTIONS = {
  ...databaseOptions('must exist'),
  ...ACCOUNT_OPTIONS,
  ...flagsOnly({
    after: optional({
      placeholder: '<seq>',
      help: 'start after this seq (the last one already seen); absent: from the oldest change kept',
    }),
    follow: flag({ help: 'then keep printing the changes committed later, until SIGINT or SIGTERM' }),
  }),
  ...FORMAT_OPTIONS,
};

export const CHANGES_HELP = `Usage: prequal-hooks changes --db <db> [--account <id>] [--after <seq>] [--follow] [--json]

Prints an account's changes (every committed change to a campaign, a candidate or the credits;
docs/changes.md) in seq order, one a line: with --json one JSON object a line (ndjson: seq,
entity, id, op, row, at, events), otherwise a readable summary. Read-only: safe beside a running
receiver. A cursor that retention has passed (changes after it were dropped) exits 1, naming the
oldest change kept; so does a cursor after the last change (a database restored from an older
backup), naming the last.

${optionsHelp(CHANGES_OPTIONS)}`;

/** One line a person reads: seq, time, what changed, and the status or figure that says most. */
export function changeSummary(change: Change): string {
  const detail = (
    change.op === 'erase'
      ? []
      : change.entity === 'credits'
        ? [change.row.credits_remaining]
        : change.entity === 'candidate'
          ? 'status' in change.row
            ? [change.row.status, change.row.interview_score]
            : ['(erased)']
          : [change.row.status]
  )
    .filter((value) => value !== null)
    .map(String);
  const events = change.events.length === 0 ? '' : ` (${change.events.length === 1 ? '1 event' : `${change.events.length} events`})`;
  return `${change.seq}\t${change.at}\t${change.op} ${change.entity} ${change.id}${detail.length > 0 ? ` ${detail.join(' ')}` : ''}${events}`;
}

/** Aborted by the first SIGINT or SIGTERM; `release` removes the handlers. */
function stopOnSignals(): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    signal: controller.signal,
    release: () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}

export const changes = defineCommand({
  options: CHANGES_OPTIONS,
  help: CHANGES_HELP,
  async run(command, io: CommandIo) {
    const { values } = command;
    const after = values.after === undefined ? undefined : integer('--after', values.after, 0);
    const json = outputFormat(values, io) === 'json';
    const { location, postgres } = databaseOf(command);
    const opened = await openForReading(location, postgres);
    const stopping = stopOnSignals();
    try {
      const store = await accountStore(opened, location, values.account);
      for await (const change of followChanges(store, { after, follow: values.follow, signal: stopping.signal })) {
        io.stdout.write(`${json ? JSON.stringify(change) : changeSummary(change)}\n`);
      }
    } catch (error) {
      if (error instanceof ChangesDroppedError || error instanceof CursorAheadError) throw new CommandError(error.message);
      throw error;
    } finally {
      stopping.release();
      await opened.close();
    }
    return 0;
  },
});
