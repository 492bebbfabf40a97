import { readEnvelope } from '../events/index.js';
import { projectable, projectBatch } from '../project/batch.js';
import { changesRow, outcomeOf, processedWith, settlementsOf } from '../project/settlement.js';
import { projectStaged, stagedEffectsOf } from '../project/bulk.js';
import type { Settlement } from '../store/rows.js';
import type { StagedEffect } from '../tables/stored.js';
import type { StoreHandle } from '../store/handle.js';
import { storePorts } from '../store/store.js';

/** What a rebuild projected, counted by outcome. */
export interface RebuildSummary {
  /** Events in the inbox made pending again and projected anew. */
  events: number;
  /** Events projected. */
  projected: number;
  /** Events of a kind this version does not know, set aside. */
  unknown: number;
  /** Events whose data did not validate, set aside. */
  dead: number;
}

/** How `rebuild` batches. */
export interface RebuildOptions {
  /** Events per transaction (per read, in a bulk load). Default 2000 (bulk: 500, which bounds memory better). */
  batchSize?: number;
  /** Called after each committed batch with the running summary. */
  onProgress?: (summary: RebuildSummary) => void;
  /** The clock of `processed_at`, in Unix ms. Default `Date.now`. */
  now?: () => number;
  /**
   * Where the engine can (SQLite): one transaction that holds the write lock throughout (a
   * receiver on the same database answers 503 meanwhile, which the sender retries), rolled back
   * whole if interrupted, and whose cost per event stays flat however large the inbox. Only the
   * inbox rows whose outcome changes are updated. Default true; false takes the batched path.
   */
  bulk?: boolean;
}

/**
 * Re-projects the whole inbox into emptied projection tables: what an upgrade that changes the
 * projection needs. Every accepted event becomes pending, then is projected in batches, as the
 * dispatcher would, on either engine. Handlers do not run again. Interrupted, it leaves pending
 * rows that a second rebuild, or any receiver on the same database, projects.
 */
export async function rebuild(handle: StoreHandle, options: RebuildOptions = {}): Promise<RebuildSummary> {
  const store = storePorts(handle);
  const now = options.now ?? Date.now;
  if (options.bulk !== false && store.bulkLoad !== undefined) {
    const batchSize = options.batchSize ?? 500;
    const summary = await store.bulkLoad('rebuild', async (bulk) => {
      // Erased candidates stay erased: their events before the erasure change nothing (section 8).
      const erased = bulk.erasures();
      const at = new Date(now()).toISOString();
      const summary: RebuildSummary = { events: bulk.accepted(), projected: 0, unknown: 0, dead: 0 };
      for (let after = 0; ;) {
        const rows = bulk.events(after, batchSize);
        if (rows.length === 0) break;
        after = rows[rows.length - 1]!.inbox_id;
        const changed: Settlement[] = [];
        const effects: StagedEffect[] = [];
        for (const row of rows) {
          const p = processedWith(row.raw, readEnvelope(row.raw, row.identity ?? undefined), erased, row.reasons);
          summary[p.state]++;
          const outcome = outcomeOf(p);
          if (changesRow(row, outcome)) changed.push({ inboxId: row.inbox_id, ...outcome });
          if (p.state === 'projected') for (const e of projectable(p)) for (const effect of stagedEffectsOf(e)) effects.push(effect);
        }
        bulk.resettle(changed, at);
        bulk.stage(effects);
        options.onProgress?.({ ...summary });
        await new Promise((resolve) => setImmediate(resolve));
      }
      projectStaged(bulk, batchSize);
      return summary;
    });
    await store.flush();
    return summary!;
  }
  const batchSize = options.batchSize ?? 2000;
  const summary: RebuildSummary = { events: await store.write((tx) => tx.resetProjection()), projected: 0, unknown: 0, dead: 0 };
  for (;;) {
    const done = await store.write(
      async (tx) => {
        const rows = await tx.claimPending(batchSize);
        // The feed gets the difference at the end, not each batch's intermediate rows.
        const processed = await projectBatch(
          tx,
          rows.map((row) => ({ raw: row.raw, reading: readEnvelope(row.raw, row.identity ?? undefined), reasons: row.reasons })),
          { changes: false },
        );
        for (const p of processed) summary[p.state]++;
        await tx.settle(settlementsOf(rows, processed), new Date(now()).toISOString(), { keepHandlers: true });
        return rows.length;
      },
      // Batches need no fsync each: one lost to a power cut is pending again, and the flush
      // below makes every one durable before rebuild returns.
      { durable: false },
    );
    if (done === 0) break;
    options.onProgress?.({ ...summary });
  }
  await store.write((tx) => tx.finishRebuild());
  await store.flush();
  return summary;
}
