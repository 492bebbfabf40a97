// prequal-hooks dump: an account's stored events as received, one a line, for replay or any other
// reader (how: src/transfer/dump.ts).
import { parseInstant } from '../events/index.js';
import { dumpEvents } from '../transfer/dump.js';
import { UsageError } from './args.js';
import { requireDatabaseFile } from './database.js';
import { ACCOUNT_OPTIONS, databaseOf, databaseOptions, flagsOnly, optional, optionsHelp } from './options.js';
import { defineCommand } from './command.js';

export const DUMP_OPTIONS = {
  ...databaseOptions('must exist'),
  ...ACCOUNT_OPTIONS,
  ...flagsOnly({
    since: optional({
      placeholder: '<instant>',
      help: 'only the events received at or after this instant (ISO 8601 with a zone, such as 2026-11-20T00:00:00Z)',
    }),
  }),
};

export const DUMP_HELP = `Usage: prequal-hooks dump --db <db> [--account <id>] [--since <instant>] > events.ndjson

Writes an account's stored events to standard output, one line each, in the order they were
received: each body exactly as it was received (the bytes its signature covered), so that another
tool, another engine or a later version can read them back. A body that is one line already (nearly
every event) is written as it is; one that is not (pretty-printed, empty, not text) is written as
{"prequal-hooks:raw-base64":"<its bytes>"}, which replay turns back into the same bytes. So
  prequal-hooks dump --db old.db | prequal-hooks replay - --db new.db
gives the same projected state. An erased person's events are left out: they appear nowhere in a
dump (their stored bodies are redacted, and replayed without the erasure's record they would make
the person's row again). A dump holds no accounts, secrets, destinations, change log or erasure
records: to move a receiver to another database, use "prequal-hooks copy".

The dump is read from one snapshot, beside a running receiver if need be, and streamed: memory
stays flat whatever the size. Nothing but the events is written on standard output; how many were
written (and left out) is said on standard error.

${optionsHelp(DUMP_OPTIONS)}

Exits 0 once every event is written, 1 when the database or the account cannot be read, 2 when
called wrongly.`;

export const dump = defineCommand({
  options: DUMP_OPTIONS,
  help: DUMP_HELP,
  async run(command, io) {
    const { values } = command;
    let since: number | undefined;
    if (values.since !== undefined) {
      const instant = parseInstant(values.since);
      if (instant === null)
        throw new UsageError(`--since must be ISO 8601 with seconds and a zone (such as 2026-11-20T00:00:00Z), got "${values.since}"`);
      since = instant;
    }
    const { location, postgres } = databaseOf(command);
    requireDatabaseFile(location);
    const report = await dumpEvents(location, io.stdout, {
      account: values.account,
      ...(since !== undefined && { since }),
      ...postgres,
    });
    io.stderr.write(
      `prequal-hooks dump: ${report.events} events written` +
        (report.erased > 0 ? `, ${report.erased} of erased people left out` : '') +
        '\n',
    );
    return 0;
  },
});
