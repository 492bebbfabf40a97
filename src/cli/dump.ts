// prequal-hooks dump: an account's erasures and stored events, one a line, for replay or any other
// reader (how: src/transfer/dump.ts).
import { parseInstant } from '../events/index.js';
import { dumpEvents } from '../transfer/dump.js';
import { UsageError } from './args.js';
import { requireDatabaseFile } from './database.js';
import { ACCOUNT_OPTIONS, databaseOf, databaseOptions, flagsOnly, optional, optionsHelp } from './options.js';
import { defineCommand } from './command.js';
import { count } from '../words.js';

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
gives the same projected state and the same erasures.

Erasures travel with the dump: an erased person's bodies are written redacted, as the database
holds them (the event with its data reduced to the ids), so that none of their e-mail, phone or
names appears in it; and before the events, one line for each of the account's erasures (all of
them, whatever --since),
  {"prequal-hooks:erasure":{"candidate_id":"<id>","erased_at":"<instant>"}}
which replay records as an erasure at that instant (reason "copied by replay"; the operator's
reason is not written, as it may name the person): the person's earlier events change nothing,
and a later one is a new contact, as in the source. A dump holds no accounts, secrets,
destinations or change log: to move a receiver to another database, use "prequal-hooks copy".

The dump is read from one snapshot, beside a running receiver if need be, and streamed: memory
stays flat whatever the size. Nothing but those lines is written on standard output; how many
were written is said on standard error.

${optionsHelp(DUMP_OPTIONS)}

Exits 0 once every line is written, 1 when the database or the account cannot be read, 2 when
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
    io.stderr.write(`prequal-hooks dump: ${report.events} events written, after ${count(report.erasures, 'erasure')}\n`);
    return 0;
  },
});
