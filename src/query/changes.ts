// The feed of an account's changes (docs/changes.md, docs/projection.md section 10): a page after
// a cursor, and the same changes followed live. Both engines number changes in commit order, so a
// cursor (the last `seq` seen) never skips one; only retention can leave a reader behind, and
// then it says so (ChangesDroppedError) rather than skipping. A cursor the account never reached
// (a database restored from an older backup) says so too (CursorAheadError), rather than waiting
// for ever on numbers the account will give again to other changes.
import { changeOf, type Change } from '../project/changes.js';
import type { StoreHandle } from '../store/handle.js';
import type { ChangesPort } from '../store/ports/changes.js';
import { storePorts } from '../store/store.js';
import type { WorkSignals } from '../store/write-ports.js';
import { alarm } from '../deadline.js';
import { QueryParameterError } from './errors.js';

/** Changes in one page at most. */
const MAX_CHANGES_PAGE = 1000;
/** Changes in one page when no limit is given. */
const DEFAULT_CHANGES_PAGE = 100;
/**
 * What a follower reads at once, about: the changes of a page until their rows reach this size.
 * A follower reads its next page only once its consumer has taken the last change of this one,
 * so a consumer that stops (a feed client that does not read) holds this much, not a thousand
 * large rows, and a page read on the event loop (SQLite) stays short.
 */
const FOLLOW_PAGE_BYTES = 256 * 1024;
/**
 * How often a follower asks the store for what was committed since, at least: it asks at once
 * when a commit of the account's changes is heard (`Store.onChanges`).
 */
const FOLLOW_POLL_MS = 500;

/**
 * The changes after the cursor were dropped by retention before they were read: resume from
 * `oldest - 1` (and read the projected state again, since some changes were missed).
 * @public
 */
export class ChangesDroppedError extends Error {
  /** Always `ChangesDroppedError`, to tell it apart from other errors. */
  override name = 'ChangesDroppedError';
  /** The error code of the HTTP answer (410). */
  readonly code = 'CHANGES_DROPPED';
  constructor(
    /** The cursor asked for. */
    readonly after: number,
    /** The lowest `seq` still kept (the next to be recorded when none is). */
    readonly oldest: number,
  ) {
    super(
      `the changes after ${after} were dropped by retention; the oldest kept is ${oldest}: read the projected state again, then follow from ${oldest - 1}`,
    );
  }
}

/**
 * The cursor is after the account's last change (its head): the database holds fewer changes than
 * the reader has seen, as after a restore from an older backup. The changes the reader applied
 * above `head` are not in this database, and the next ones will be numbered from `head + 1`: read
 * the projected state again, then follow from `head`.
 * @public
 */
export class CursorAheadError extends Error {
  /** Always `CursorAheadError`, to tell it apart from other errors. */
  override name = 'CursorAheadError';
  /** The error code of the HTTP answer (409). */
  readonly code = 'CURSOR_AHEAD';
  constructor(
    /** The cursor asked for. */
    readonly after: number,
    /** The `seq` of the account's last change (0 when it has none). */
    readonly head: number,
  ) {
    super(
      `the cursor ${after} is after the last change recorded, ${head}: the database was restored from an older backup (or the cursor is another database's); read the projected state again, then follow from ${head}`,
    );
  }
}

/**
 * What `readChanges` takes.
 * @public
 */
export interface ChangePageParameters {
  /** The cursor: the `seq` of the last change already seen. Absent: from the oldest change kept. */
  after?: number | undefined;
  /** Changes at most, 1 to 1000. Default 100. */
  limit?: number | undefined;
}

/**
 * A page of an account's changes, oldest first.
 * @public
 */
export interface ChangePage {
  /** The changes after the cursor, oldest first. */
  changes: Change[];
  /**
   * The cursor to ask from next: the `seq` of the last change of the page, or when the page is
   * empty the `after` asked for (absent: the last change dropped by retention, 0 if none).
   */
  next: number;
}

/**
 * What `followChanges` and `receiver.changes()` take.
 * @public
 */
export interface FollowChangesOptions {
  /** The cursor: the `seq` of the last change already seen. Absent: from the oldest change kept. */
  after?: number | undefined;
  /** false: end once the changes recorded so far are read. Default true: wait for new ones until the iterator is returned or `signal` aborts. */
  follow?: boolean | undefined;
  /** Ends the iteration (without an error), also while it waits for new changes. */
  signal?: AbortSignal | undefined;
}

/** What a follower reads of a store: the account's changes, and the commits that record them. */
type ChangeFeed = Pick<ChangesPort, 'changesAfter'> & Pick<WorkSignals, 'onChanges'> & { readonly account: string };

function checkedCursor(after: number | undefined): number | undefined {
  if (after === undefined) return undefined;
  if (!Number.isSafeInteger(after) || after < 0)
    throw new QueryParameterError('after', `must be a whole number from 0, got ${String(after)}`);
  return after;
}

function checkedLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_CHANGES_PAGE;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_CHANGES_PAGE)
    throw new QueryParameterError('limit', `must be a whole number from 1 to ${MAX_CHANGES_PAGE}, got ${String(limit)}`);
  return limit;
}

/** One page from the port (of about `maxBytes` when given): the 409 and 410 rules, then the changes parsed; and the head. */
async function pageOf(
  port: Pick<ChangesPort, 'changesAfter'>,
  after: number | undefined,
  limit: number,
  maxBytes?: number,
): Promise<ChangePage & { head: number }> {
  const page = await port.changesAfter(after ?? 0, limit, maxBytes);
  // The head only grows (read after the changes, it is at least what they were read at).
  if (after !== undefined && after > page.last) throw new CursorAheadError(after, page.last);
  // Only what retention dropped after the cursor: a gap in the numbers alone is no such case.
  if (after !== undefined && after < page.droppedThrough) throw new ChangesDroppedError(after, page.oldest ?? page.droppedThrough + 1);
  const changes = page.changes.map(changeOf);
  return { changes, next: changes.at(-1)?.seq ?? after ?? page.droppedThrough, head: page.last };
}

/**
 * Up to `limit` of the account's changes after `after`, in `seq` order. Rejects with
 * ChangesDroppedError when changes after `after` were dropped by retention, with
 * CursorAheadError when `after` is past the account's last change, and with
 * QueryParameterError for a cursor or limit out of range.
 * @public
 */
export async function readChanges(store: StoreHandle, parameters: ChangePageParameters = {}): Promise<ChangePage> {
  const after = checkedCursor(parameters.after);
  const { changes, next } = await pageOf(storePorts(store), after, checkedLimit(parameters.limit));
  return { changes, next };
}

/**
 * The account's changes after `after`, in `seq` order, each once; then, unless `follow: false`,
 * the changes committed later (by this process or any other on the database), read as soon as
 * their commit is heard and every half second in any case, until the iterator is returned
 * (`break`) or `signal` aborts. Throws ChangesDroppedError when retention dropped changes the
 * cursor had not reached, and CursorAheadError when the cursor is past the account's last change
 * (at the start, or later if the database is restored under the follower).
 * @public
 */
export async function* followChanges(store: StoreHandle, options: FollowChangesOptions = {}): AsyncGenerator<Change, void, undefined> {
  const port = storePorts(store);
  const after = checkedCursor(options.after);
  const { signal, follow = true } = options;
  const committed = follow ? commitsOf(port, signal) : undefined;
  try {
    yield* pages(port, after, signal, committed);
  } finally {
    committed?.close();
  }
}

/** A wait that ends after `ms`, at a commit of the account's changes heard since the last wait, or when `signal` aborts. */
function commitsOf(port: ChangeFeed, signal: AbortSignal | undefined): { wait(ms: number): Promise<void>; close(): void } {
  const clock = alarm();
  const unsubscribe = port.onChanges((account) => {
    if (account === port.account || account === '') clock.wake();
  });
  signal?.addEventListener('abort', clock.wake, { once: true });
  return {
    wait: (ms) => (signal?.aborted === true ? Promise.resolve() : clock.wait(ms)),
    close() {
      unsubscribe();
      signal?.removeEventListener('abort', clock.wake);
    },
  };
}

async function* pages(
  port: ChangeFeed,
  after: number | undefined,
  signal: AbortSignal | undefined,
  committed: ReturnType<typeof commitsOf> | undefined,
): AsyncGenerator<Change, void, undefined> {
  const aborted = () => signal?.aborted === true;
  while (!aborted()) {
    const page = await pageOf(port, after, MAX_CHANGES_PAGE, FOLLOW_PAGE_BYTES);
    for (const change of page.changes) {
      if (aborted()) return;
      yield change;
    }
    after = page.next;
    // A page cut by its size is not the end of what was recorded: read on at once.
    if (page.changes.length > 0 && page.next < page.head) continue;
    if (committed === undefined) return;
    await committed.wait(FOLLOW_POLL_MS);
  }
}

export type {
  Change,
  ChangeFields,
  CampaignChange,
  CandidateChange,
  CreditsChange,
  CampaignChangeRow,
  CandidateChangeRow,
  RedactedCandidateRow,
  CreditsChangeRow,
} from '../project/changes.js';
