// The retention of the feed's changes (docs/changes.md, "Retention") that a receiver runs: at start
// and hourly, the changes recorded before the retention are dropped (prune-changes.ts: never one a
// destination still needs), a chunk a transaction, yielding between chunks so that webhooks and the
// projection are not held behind one long delete.
import { setImmediate as yieldToOthers } from 'node:timers/promises';
import type { Logger } from '../logging.js';
import { repeatFromStart, type Repeating } from '../repeat.js';
import { count } from '../words.js';
import type { ChangesPort } from './ports/changes.js';

/** How often the changes are pruned once started (and once at start). */
const PRUNE_EVERY_MS = 60 * 60_000;
/** Changes dropped in one transaction at most. */
const PRUNE_CHUNK = 1000;

/** Drops the changes older than `retentionMs`, never twice at once; a line when some went. */
export function keepChangesFor(store: Pick<ChangesPort, 'pruneChanges'>, retentionMs: number, logger: Logger): Repeating {
  const prune = async (stopped: () => boolean) => {
    const before = new Date(Date.now() - retentionMs).toISOString();
    let dropped = 0;
    for (;;) {
      const chunk = await store.pruneChanges(before, PRUNE_CHUNK);
      dropped += chunk;
      if (chunk < PRUNE_CHUNK || stopped()) break;
      await yieldToOthers();
    }
    if (dropped > 0) logger.info({ dropped, before }, `changes retention: ${count(dropped, 'change')} recorded before ${before} dropped`);
  };
  // A run stopped ends after its chunk.
  return repeatFromStart(
    (stopped) =>
      prune(stopped).catch((error: unknown) =>
        logger.error({ err: { message: (error as Error).message } }, 'changes retention failed; it runs again within the hour'),
      ),
    PRUNE_EVERY_MS,
  );
}
