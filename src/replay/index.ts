import { openStore, type DatabaseOption, type StoreOptions } from '../store/open.js';
import { replayInto, ReplayInputError, requireReadable, type ReplayOptions, type ReplaySummary } from './replay.js';
import type { ReplayInput } from './sources.js';

export type { ReplayInput, ReplayOptions, ReplaySummary };
export { replayInto, ReplayInputError, requireReadable };

/**
 * Replays fixture events into a database (a SQLite path, created if needed, an open handle, a
 * PostgreSQL URL or pool): objects, `.json` files (one event or an array), `.ndjson` files,
 * folders of them. Rejects with ReplayInputError, after replaying the rest, when an input cannot
 * be read.
 *
 *   const summary = await replay(['fixtures/scenarios/campaign-lifecycle.ndjson'], { database: ':memory:' });
 */
export async function replay(
  inputs: Iterable<ReplayInput> | ReplayInput,
  options: ReplayOptions & StoreOptions & { database: DatabaseOption },
): Promise<ReplaySummary> {
  const store = await openStore(options.database, options);
  try {
    return requireReadable(await replayInto({ store }, inputs, options));
  } finally {
    await store.close();
  }
}
export { rebuild, type RebuildOptions, type RebuildSummary } from './rebuild.js';
