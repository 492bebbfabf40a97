import type { Issue } from '../events/index.js';
import { prepareDeadLetters } from '../dispatch/dead-letters.js';
import { createLogger } from '../logging.js';
import { createReceiver } from '../receiver/create-receiver.js';
import { openStore } from '../store/open.js';
import type { InboxRow } from '../store/rows.js';
import type { InboxState } from '../store/inbox-state.js';
import type { StoreHandle } from '../store/handle.js';
import type { Store } from '../store/store.js';
import { UsageError, type CommandIo } from './args.js';
import { accountStore } from './account-target.js';
import { DEAD_LETTERS_HELP, REPROCESS_OPTIONS } from './dead-letters-options.js';
import { databaseOf } from './options.js';
import { defineCommand } from './command.js';
import { requireDatabaseFile } from './database.js';
import { ownerJson, ownershipOf, ownerText, type Ownership } from './owner.js';
import { outputFormat, printJson, reasonsText, renderTable, type Column } from './output.js';

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

type Requeue = (ids: readonly number[]) => Promise<{ requeued: number[]; skipped: number[] }>;
/** What the report reads: the rows set aside, and each row before and after. */
type ReprocessReads = Pick<Store, 'setAside' | 'inboxRow'>;

/** Requeues with `requeue`, and says what became of each row, from its state before and after. */
async function reprocessRows(store: ReprocessReads, ids: readonly number[] | 'all', requeue: Requeue) {
  const wanted = ids === 'all' ? (await store.setAside(0, Number.MAX_SAFE_INTEGER)).map((row) => row.inbox_id) : ids;
  const before = new Map<number, InboxRow | undefined>();
  for (const id of wanted) before.set(id, await store.inboxRow(id));
  const outcome = await requeue(wanted);
  const results: Result[] = [];
  for (const id of outcome.requeued) {
    const row = (await store.inboxRow(id))!;
    results.push({
      inbox_id: id,
      kind: row.kind,
      before: before.get(id)!.state,
      after: row.state,
      reasons: row.reasons === null ? [] : (JSON.parse(row.reasons) as Issue[]),
    });
  }
  return { results, skipped: outcome.skipped.map((id) => ({ inbox_id: id, reason: whySkipped(before.get(id)) })) };
}

/** Projects the requeued rows in this process: the receiver's own projection and dispatcher. */
async function reprocessHere(store: StoreHandle & ReprocessReads, ids: readonly number[] | 'all', io: CommandIo) {
  // Nothing listens, so no secret is involved; no heartbeat: this process hands nothing over. Its
  // errors go to the command's stderr.
  const logger = createLogger({ level: 'error' }, io.stderr);
  const receiver = createReceiver({ database: store, allowUnsigned: true, logger, heartbeat: false });
  try {
    return await reprocessRows(store, ids, async (wanted) => {
      const outcome = await receiver.deadLetters.reprocess(wanted);
      await receiver.drain();
      return outcome;
    });
  } finally {
    await receiver.close();
  }
}

/**
 * Requeues event dead letters, then projects them: the receiver running on the database does (its
 * handlers run for them), or this process when none runs or with --project-here.
 */
export const reprocess = defineCommand({
  options: REPROCESS_OPTIONS,
  help: DEAD_LETTERS_HELP,
  positionals: true,
  async run(command, io) {
    const { values, positionals } = command;
    const format = outputFormat(values, io);
    if (values.all && positionals.length > 0) throw new UsageError('give --all or inbox ids, not both');
    if (!values.all && positionals.length === 0) throw new UsageError('give the inbox ids to reprocess, or --all');
    const ids = values.all ? 'all' : [...new Set(positionals.map(inboxId))];
    const { location: path, postgres } = databaseOf(command);
    requireDatabaseFile(path);

    const opened = await openStore(path, postgres);
    let report: Awaited<ReturnType<typeof reprocessRows>>;
    let ownership: Ownership;
    try {
      const store = await accountStore(opened, path, values.account);
      ownership = await ownershipOf(store, values['project-here']);
      report =
        ownership.owner === undefined
          ? await reprocessHere(store, ids, io)
          : await reprocessRows(store, ids, (wanted) => prepareDeadLetters(store, () => store.announceWork()).reprocess(wanted));
    } finally {
      await opened.close();
    }
    const { results, skipped } = report;
    const { owner, note } = ownership;

    if (format === 'json') {
      printJson(io, {
        requeued: results.map((r) => r.inbox_id),
        skipped,
        results,
        projectedBy: owner === undefined ? 'here' : 'owner',
        owner: ownerJson(owner),
      });
    } else {
      const projected = results.filter((r) => r.after === 'projected').length;
      const done =
        owner === undefined
          ? `Requeued and processed ${results.length}: ${projected} projected, ${results.length - projected} still set aside.`
          : `Requeued ${results.length} for ${ownerText(owner)}, which projects them and runs its handlers; "prequal-hooks dead-letters" lists those set aside again.`;
      const lines = results.length === 0 ? ['Nothing was requeued.'] : [renderTable(results, RESULT_COLUMNS), '', done];
      lines.push(...skipped.map((s) => `Skipped inbox id ${s.inbox_id}: ${s.reason}.`));
      io.stdout.write(`${lines.join('\n')}\n`);
    }
    if (note !== undefined) io.stderr.write(`prequal-hooks dead-letters: ${note}.\n`);
    // Ids asked for by name that could not be requeued are a mistake worth an exit code; --all skips quietly.
    if (!values.all && skipped.length > 0) {
      io.stderr.write(`prequal-hooks dead-letters: could not reprocess ${skipped.map((s) => `${s.inbox_id} (${s.reason})`).join(', ')}\n`);
      return 1;
    }
    return 0;
  },
});
