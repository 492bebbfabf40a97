// Where a destination stands, as `destinations list`, the console and the metrics show it: what it
// has not delivered yet, how old the oldest of it is, and when its next attempt is due.
import type { ChangesPort } from '../store/ports/changes.js';
import type { DestinationBacklog, DestinationRecord, DestinationsPort } from './sql.js';

/** Where a destination stands, as the console and the metrics show it. */
export interface DestinationLag {
  /** Changes not delivered yet, dead ones aside: queued, and not looked at yet. */
  behind: number;
  dead: number;
  /** Age of the oldest of them (when it was recorded), seconds; 0 when none is behind. */
  oldestSeconds: number;
}

/**
 * The lag of a destination: its queue and the changes after its cursor; the oldest of them is read
 * from the account's feed (a change dropped by retention counts from now).
 */
export async function destinationLag(
  store: { destinations: DestinationsPort; forAccount(account: string): { changesAfter: ChangesPort['changesAfter'] } },
  record: DestinationRecord,
  now: number,
): Promise<DestinationLag> {
  const backlog = await store.destinations.backlog(record);
  const unread = Math.max(0, backlog.last - record.cursor);
  const [first] = backlog.queued > 0 ? await store.destinations.deliveries(record, 'queued', 1) : [];
  const oldestSeq = first?.seq ?? (unread > 0 ? record.cursor + 1 : undefined);
  let oldestSeconds = 0;
  if (oldestSeq !== undefined) {
    const [oldest] =
      record.kind === 'operational'
        ? (await store.destinations.events(record.account, oldestSeq - 1, 1)).events
        : (await store.forAccount(record.account).changesAfter(oldestSeq - 1, 1)).changes;
    const at = oldest === undefined ? Number.NaN : Date.parse(oldest.at);
    oldestSeconds = Number.isFinite(at) ? Math.max(0, now - at) / 1000 : 0;
  }
  return { behind: backlog.queued + unread, dead: backlog.dead, oldestSeconds };
}

/**
 * When a destination's next attempt is due (ISO 8601), from its backlog's `due`: the soonest due of
 * its queued changes that come first for their entity; while paused (and for a Redis stream or a NATS
 * subject, one change at a time), its oldest queued change's, the probe. Null when nothing is queued, and while
 * it is disabled or held.
 */
export function nextAttemptAt(record: DestinationRecord, due: DestinationBacklog['due']): string | null {
  if (record.state === 'disabled' || record.hold === 1) return null;
  const at = record.state === 'paused' || /^(rediss?|nats|tls):/i.test(record.url) ? due.oldest : due.soonest;
  return at === null ? null : new Date(at).toISOString();
}
