import { prepareProjection } from '../project/write.js';
import { configureDatabase, openDatabase, type SqliteDatabase } from '../store/sqlite/database.js';
import { prepareInbox } from '../store/inbox.js';
import { replayInto, type ReplayOptions, type ReplaySummary } from './replay.js';
import type { ReplayInput } from './sources.js';

export type { ReplayInput, ReplayOptions, ReplaySummary };
export { replayInto };

/**
 * Replays fixture events into a database (a path, created if needed, or an open handle):
 * objects, `.json` files (one event or an array), `.ndjson` files, folders of them.
 *
 *   const summary = await replay(['fixtures/scenarios/campaign-lifecycle.ndjson'], { database: ':memory:' });
 */
export async function replay(
  inputs: Iterable<ReplayInput> | ReplayInput,
  options: ReplayOptions & { database: string | SqliteDatabase },
): Promise<ReplaySummary> {
  const owned = typeof options.database === 'string';
  const db = typeof options.database === 'string' ? openDatabase(options.database) : configureDatabase(options.database);
  try {
    return await replayInto({ db, inbox: prepareInbox(db), projection: prepareProjection(db) }, inputs, options);
  } finally {
    if (owned) db.close();
  }
}
