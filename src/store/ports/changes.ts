// The feed's reads and its retention (docs/projection.md section 10). Changes are recorded by the
// projection's and the erasure's own transactions (`ProjectionWritesTx.recordChanges`).
import type { StoredChangePage } from '../rows.js';

export interface ChangesPort {
  /**
   * Up to `limit` of the account's changes after `after` (a `seq`), in `seq` order, and where its
   * feed stands. With `maxBytes`, the page ends at the change whose size (its row and events as
   * stored) brings the page's to `maxBytes` or more: one change at least, however large.
   */
  changesAfter(after: number, limit: number, maxBytes?: number): Promise<StoredChangePage>;
  /**
   * Retention, across accounts: drops the oldest changes recorded before `before` (UTC ISO 8601),
   * up to `limit` in one transaction; how many went. A reader whose cursor is below what was
   * dropped learns it from `droppedThrough`. A change a destination still needs (queued, dead, or
   * after its cursor) is kept, with every change after it.
   */
  pruneChanges(before: string, limit: number): Promise<number>;
}
