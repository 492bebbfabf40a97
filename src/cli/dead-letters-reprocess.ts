import { parseArgs } from 'node:util';
import { pino } from 'pino';
import type { Issue } from '../events/index.js';
import { createLogger } from '../logging.js';
import { createReceiver } from '../receiver.js';
import type { InboxRow, InboxState } from '../store/store.js';
import { databasePath, databaseSchema, DB_FLAG, HELP_FLAG, parsed, UsageError, type CommandIo } from './args.js';
import { requireDatabaseFile } from './database.js';
import { FORMAT_FLAGS, outputFormat, printJson, reasonsText, renderTable, type Column } from './output.js';

interface Result {
  inbox_id: number;
  kind: string | null;
  before: InboxState;
  after: InboxState;
  reasons: Issue[];
}

const RESULT_COLUMNS: Array<Column<Result>> = [
  { header: 'INBOX ID', value: (r) => r.inbox_id, align: 'right' },
  { header: 'KIND', value: (r) => r.kind, max: 40 },
  { header: 'BEFORE', value: (r) => r.before },
  { header: 'AFTER', value: (r) => r.after },
  { header: 'REASONS', value: (r) => reasonsText(r.reasons), max: 100 },
];

function inboxId(text: string): number {
  const id = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(id) || id < 1) {
    throw new UsageError(`inbox ids are whole numbers from 1 (as "prequal-hooks dead-letters" lists them), got "${text}"`);
  }
  return id;
}

function whySkipped(row: InboxRow | undefined): string {
  if (row === undefined) return 'no inbox row has this id';
  if (row.verdict !== 'accepted') return `not an event envelope (${row.verdict}): it can be listed, not reprocessed`;
  return `it is ${row.state}, not set aside`;
}

/** Requeues event dead letters, then projects them in this process and says what became of each. */
export async function reprocess(argv: string[], io: CommandIo, help: string): Promise<number> {
  const { values, positionals } = parsed(() =>
    parseArgs({ args: argv, strict: true, allowPositionals: true, options: { ...HELP_FLAG, ...DB_FLAG, ...FORMAT_FLAGS, all: { type: 'boolean' } } }),
  );
  if (values.help) {
    io.stdout.write(`${help}\n`);
    return 0;
  }
  const format = outputFormat(values, io);
  if (values.all && positionals.length > 0) throw new UsageError('give --all or inbox ids, not both');
  if (!values.all && positionals.length === 0) throw new UsageError('give the inbox ids to reprocess, or --all');
  const ids = [...new Set(positionals.map(inboxId))];
  const path = databasePath(values.db, io.env);
  requireDatabaseFile(path);

  // The receiver's own projection and dispatcher; nothing listens, so no secret is involved.
  const logger = createLogger({ level: 'error' }, pino.destination({ dest: 2, sync: true }));
  const receiver = createReceiver({ database: path, ...databaseSchema(values.schema, io.env, path), allowUnsigned: true, logger });
  let results: Result[];
  let skipped: Array<{ inbox_id: number; reason: string }>;
  try {
    const store = await receiver.store();
    const wanted = values.all ? (await store.setAside(0, Number.MAX_SAFE_INTEGER)).map((row) => row.inbox_id) : ids;
    const before = new Map<number, InboxRow | undefined>();
    for (const id of wanted) before.set(id, await store.inboxRow(id));
    const outcome = await receiver.deadLetters.reprocess(wanted);
    await receiver.drain();
    const after = new Map<number, InboxRow>();
    for (const id of outcome.requeued) after.set(id, (await store.inboxRow(id))!);
    results = outcome.requeued.map((id) => {
      const row = after.get(id)!;
      return {
        inbox_id: id,
        kind: row.kind,
        before: before.get(id)!.state,
        after: row.state,
        reasons: row.reasons === null ? [] : (JSON.parse(row.reasons) as Issue[]),
      };
    });
    skipped = outcome.skipped.map((id) => ({ inbox_id: id, reason: whySkipped(before.get(id)) }));
  } finally {
    await receiver.close();
  }

  if (format === 'json') {
    printJson(io, { requeued: results.map((r) => r.inbox_id), skipped, results });
  } else {
    const projected = results.filter((r) => r.after === 'projected').length;
    const lines =
      results.length === 0
        ? ['Nothing was requeued.']
        : [renderTable(results, RESULT_COLUMNS), '', `Requeued and processed ${results.length}: ${projected} projected, ${results.length - projected} still set aside.`];
    lines.push(...skipped.map((s) => `Skipped inbox id ${s.inbox_id}: ${s.reason}.`));
    io.stdout.write(`${lines.join('\n')}\n`);
  }
  // Ids asked for by name that could not be requeued are a mistake worth an exit code; --all skips quietly.
  if (!values.all && skipped.length > 0) {
    io.stderr.write(`prequal-hooks dead-letters: could not reprocess ${skipped.map((s) => `${s.inbox_id} (${s.reason})`).join(', ')}\n`);
    return 1;
  }
  return 0;
}
