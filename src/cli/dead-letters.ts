import { prepareDeadLetters, type EventDeadLetter, type HandlerDeadLetter } from '../dispatch/dead-letters.js';
import type { CommandIo } from './args.js';
import { accountStore } from './account-target.js';
import { databaseOf } from './options.js';
import { defineCommand } from './command.js';
import { DEAD_LETTERS_HELP, LIST_OPTIONS } from './dead-letters-options.js';
import { openForReading } from './database.js';
import { outputFormat, printJson, reasonsText, renderTable, shortInstant, type Column } from './output.js';

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

const list = defineCommand({
  options: LIST_OPTIONS,
  help: DEAD_LETTERS_HELP,
  async run(command, io) {
    const { values } = command;
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
  },
});

/** `dead-letters` lists; `dead-letters reprocess` requeues and processes (it loads the receiver). */
export async function deadLetters(argv: string[], io: CommandIo): Promise<number> {
  if (argv[0] !== 'reprocess') return list(argv, io);
  const { reprocess } = await import('./dead-letters-reprocess.js');
  return reprocess(argv.slice(1), io);
}
