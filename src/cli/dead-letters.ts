import { prepareDeadLetters, type EventDeadLetter, type HandlerDeadLetter } from '../dispatch/dead-letters.js';
import type { CommandIo } from './args.js';
import { accountStore } from './account-target.js';
import { databaseOf, optionsHelp, parseCommand } from './options.js';
import { LIST_OPTIONS, REPROCESS_ONLY_OPTIONS } from './dead-letters-options.js';
import { openForReading } from './database.js';
import { outputFormat, printJson, reasonsText, renderTable, shortInstant, type Column } from './output.js';

export const DEAD_LETTERS_HELP = `Usage: prequal-hooks dead-letters [options]
       prequal-hooks dead-letters reprocess (--all | <inbox id>...) [options]

Lists what was set aside (read-only): events of a kind this version does not know
(unknown), events whose data or envelope did not validate (dead), with the reasons, and
application handlers that kept failing. "reprocess" puts events back in the work list: after
an upgrade that knows the kind, or once the stored body was mended. A receiver running on the
database (one whose heartbeat there is recent: "prequal-hooks serve", an application's
createReceiver) then projects them and runs its handlers; when none runs, or with
--project-here, this process processes them now (no handlers run). Bodies that are not event
envelopes can be listed, not reprocessed.

${optionsHelp({ ...LIST_OPTIONS, ...REPROCESS_ONLY_OPTIONS })}

JSON of the list: {"events": [{type: "event", inbox_id, state, kind, verdict, received_at,
reasons: [{path, message}], body}], "handler_failures": [{type: "handler", failure_id,
inbox_id, handler, error, attempts, failed_at}]}.
JSON of reprocess: {"requeued": [ids], "skipped": [{inbox_id, reason}],
"results": [{inbox_id, kind, before, after, reasons}], "projectedBy": "owner" or "here",
"owner": {receiver_id, pid, host, started_at} or null}; left to a running receiver, "after"
is the state when the command ended (usually "pending").`;

const EVENT_COLUMNS: Array<Column<EventDeadLetter>> = [
  { header: 'INBOX ID', value: (d) => d.inbox_id, align: 'right' },
  { header: 'STATE', value: (d) => d.state },
  { header: 'KIND', value: (d) => d.kind, max: 40 },
  { header: 'VERDICT', value: (d) => d.verdict },
  { header: 'RECEIVED (UTC)', value: (d) => shortInstant(d.received_at) },
  { header: 'REASONS', value: (d) => reasonsText(d.reasons), max: 100 },
];

const HANDLER_COLUMNS: Array<Column<HandlerDeadLetter>> = [
  { header: 'FAILURE ID', value: (f) => f.failure_id, align: 'right' },
  { header: 'INBOX ID', value: (f) => f.inbox_id, align: 'right' },
  { header: 'HANDLER', value: (f) => f.handler, max: 30 },
  { header: 'ATTEMPTS', value: (f) => f.attempts, align: 'right' },
  { header: 'FAILED (UTC)', value: (f) => shortInstant(f.failed_at) },
  { header: 'ERROR', value: (f) => f.error, max: 100 },
];

async function list(argv: string[], io: CommandIo): Promise<number> {
  const command = parseCommand(LIST_OPTIONS, argv, io.env);
  const { values } = command;
  if (command.help) {
    io.stdout.write(`${DEAD_LETTERS_HELP}\n`);
    return 0;
  }
  const format = outputFormat(values, io);
  const limit = values.limit;
  const { location, postgres } = databaseOf(command);
  const opened = await openForReading(location, postgres);
  let events: EventDeadLetter[];
  let handlerFailures: HandlerDeadLetter[];
  try {
    const store = await accountStore(opened, location, values.account);
    // Nothing is requeued here, so nothing needs waking.
    const all = await prepareDeadLetters(store, () => {}).list(limit);
    events = all.filter((d): d is EventDeadLetter => d.type === 'event');
    handlerFailures = all.filter((d): d is HandlerDeadLetter => d.type === 'handler');
  } finally {
    await opened.close();
  }

  if (format === 'json') {
    printJson(io, { events, handler_failures: handlerFailures });
  } else {
    const lines = [
      events.length === 0 ? 'No events set aside.' : `Events set aside\n${renderTable(events, EVENT_COLUMNS)}`,
      '',
      handlerFailures.length === 0 ? 'No handler failures.' : `Handler failures\n${renderTable(handlerFailures, HANDLER_COLUMNS)}`,
    ];
    io.stdout.write(`${lines.join('\n')}\n`);
  }
  if (events.length === limit || handlerFailures.length === limit) {
    io.stderr.write(`prequal-hooks dead-letters: showing the first ${limit} of each; --limit shows more.\n`);
  }
  return 0;
}

/** `dead-letters` lists; `dead-letters reprocess` requeues and processes (it loads the receiver). */
export async function deadLetters(argv: string[], io: CommandIo): Promise<number> {
  if (argv[0] !== 'reprocess') return list(argv, io);
  const { reprocess } = await import('./dead-letters-reprocess.js');
  return reprocess(argv.slice(1), io, DEAD_LETTERS_HELP);
}
