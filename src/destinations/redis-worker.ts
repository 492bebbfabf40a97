// A Redis destination's delivery (docs/destinations.md, "Redis Streams"): its queued changes
// appended to its stream one at a time in `seq` order, from the first queued one, and only when
// that one is due. A failed append is tried again on the destination's schedule, capped at its last
// step, and never set aside: a later retry of a lower id would be refused by Redis, and taken as
// appended. Each append is settled by seq in the database at once, so a restart resumes where it
// was; an append redone after a crash is refused by Redis (its id is the stream's top), not doubled.
import { changeOf, type Change } from '../project/changes.js';
import type { DeliveryStore, DestinationRecord, QueuedSend } from './sql.js';
import type { DeliveryLogger } from './delivery-logger.js';
import { maskedUrl } from './masked-url.js';
import { errorText } from './errors.js';
import type { NetworkPolicy } from './network-policy.js';
import type { OpenedDestination } from './registry.js';
import { keptConnection } from './kept-connection.js';
import { openStreamWriter, StreamNotOursError, type StreamWriter } from './redis-stream.js';
import { delayBefore } from './schedule.js';
import { webhookId } from './signing.js';

/** What a broker destination's sender (Redis, NATS) works with. */
export interface RedisContext {
  store: DeliveryStore;
  logger: DeliveryLogger;
  now: () => number;
  /** Consecutive failures that pause a destination (the breaker). */
  pauseAfter: number;
  timeoutMs: number;
  /** Where destinations may connect. */
  policy: NetworkPolicy;
}

/** The stream writer of one destination, opened at first need and kept while its URL and stream stay. */
export interface RedisSender {
  /**
   * Appends the queued changes that are due, from the first, in `seq` order; `onlyOne` while paused
   * (a probe). Whether more may be due now (all it took went in). `signal` ends it, what it had not
   * appended left queued as it was (no attempt counted).
   */
  send(record: DestinationRecord, opened: OpenedDestination, options: { onlyOne: boolean; signal: AbortSignal }): Promise<boolean>;
  /** Drops the connection at once: an append in flight fails now, not at its deadline. */
  halt(): void;
  close(): Promise<void>;
}

// Changes read from the feed, and queued changes taken, in one send at most.
const BATCH = 200;

/** The delay before attempt `attempt`: the schedule's, then its last step again and again (never spent). */
function cappedDelay(schedule: readonly number[], attempt: number): number {
  return delayBefore(schedule, Math.min(attempt, Math.max(schedule.length - 1, 0))) ?? 0;
}

/**
 * The stream holds what this destination did not write: held paused (never probed: a probe that
 * appended would write into someone else's log) until an operator enables it, the change queued.
 */
async function notOurs(context: RedisContext, record: DestinationRecord, error: StreamNotOursError): Promise<void> {
  await context.store.destinations.setState(record, 'paused', error.message, new Date(context.now()).toISOString(), true);
  context.logger.error(
    { destination: record.destination, account: record.account, seq: error.seq, stream: error.stream, lastId: error.lastId },
    'destination paused: its Redis stream holds entries it did not write; nothing more is appended until `prequal-hooks destinations enable`',
  );
}

/**
 * A broker's failed append (publish) settled: the change stays queued, never set aside, due again
 * after the schedule's next step (its last one, once spent); `pauseAfter` failures in a row pause it.
 */
export async function settleFailure(
  context: Pick<RedisContext, 'store' | 'now'>,
  record: DestinationRecord,
  row: QueuedSend,
  message: string,
  pauseAfter: number,
): Promise<void> {
  await context.store.destinations.failed(record, {
    seq: row.seq,
    dead: false,
    nextAt: context.now() + cappedDelay(JSON.parse(record.schedule) as number[], row.attempts + 1),
    status: null,
    error: message,
    at: new Date(context.now()).toISOString(),
    pauseAfter,
  });
}

async function failed(context: RedisContext, record: DestinationRecord, row: QueuedSend, error: unknown): Promise<void> {
  if (error instanceof StreamNotOursError) return await notOurs(context, record, error);
  // The server's own words: an error reply may be any size.
  const message = errorText((error as Error).message);
  await settleFailure(context, record, row, message, context.pauseAfter);
  context.logger.warn(
    {
      destination: record.destination,
      account: record.account,
      seq: row.seq,
      url: maskedUrl(record.url),
      error: message,
      attempts: row.attempts + 1,
    },
    'destination: append to the Redis stream failed; tried again later (a Redis destination never sets a change aside)',
  );
}

/** The queued rows to append (publish) now, each with its change read from the feed now; rows retention dropped are settled away. */
export async function batchOf(
  context: Pick<RedisContext, 'store' | 'logger' | 'now'>,
  record: DestinationRecord,
  onlyOne: boolean,
): Promise<{ rows: Array<{ row: QueuedSend; change: Change }>; oldest: number | null }> {
  const [head] = await context.store.destinations.due(record, context.now(), 1, true);
  if (head === undefined) return { rows: [], oldest: null };
  const queued = onlyOne ? [head] : await context.store.destinations.deliveries(record, 'queued', BATCH);
  const page = await context.store.forAccount(record.account).changesAfter(head.seq - 1, BATCH);
  const bySeq = new Map(page.changes.map((stored) => [stored.seq, stored]));
  const first = page.changes[0]?.seq ?? page.last + 1;
  const rows: Array<{ row: QueuedSend; change: Change }> = [];
  for (const row of queued) {
    const stored = bySeq.get(row.seq);
    if (stored !== undefined) rows.push({ row, change: changeOf(stored) });
    else if (row.seq < first) {
      // Gone from the feed before it was appended (published): it cannot be, and it must not hold the log up.
      await context.store.destinations.delivered(record, row.seq, new Date(context.now()).toISOString());
      context.logger.warn(
        { destination: record.destination, account: record.account, seq: row.seq },
        'destination: a queued change was dropped by retention before it reached its stream',
      );
    } else break;
  }
  return { rows, oldest: page.oldest };
}

/**
 * Before an erasure's entry, the entries of the person's earlier changes leave the stream (XDEL):
 * a consumer reading it from now on finds nothing of them, and the `erase` entry tells one that
 * already read them to erase its copies (docs/personal-data.md).
 */
async function forgetEarlier(
  context: RedisContext,
  account: string,
  writer: StreamWriter,
  erase: Change,
  oldest: number | null,
): Promise<void> {
  const earlier = (await context.store.forAccount(account).people.changesOf(erase.id)).filter((c) => c.seq < erase.seq).map((c) => c.seq);
  await writer.forget(erase.id, earlier, oldest);
}

export function redisSender(context: RedisContext): RedisSender {
  // `trimmedAt`: the oldest change kept when the stream was last trimmed on this connection.
  const writer = keptConnection<StreamWriter, { trimmedAt: number | undefined }>(() => ({ trimmedAt: undefined }));

  const writerOf = (opened: OpenedDestination, signal: AbortSignal) =>
    writer.of(JSON.stringify([opened.url, opened.stream, opened.tls]), () =>
      openStreamWriter(opened.url, opened.stream!, {
        timeoutMs: context.timeoutMs,
        signal,
        policy: context.policy,
        ...(opened.tls !== undefined && { tls: opened.tls }),
      }),
    );

  return {
    async send(record, opened, { onlyOne, signal }) {
      const { rows, oldest } = await batchOf(context, record, onlyOne);
      let appended = 0;
      for (const { row, change } of rows) {
        if (signal.aborted) return false;
        try {
          const stream = await writerOf(opened, signal).opening;
          if (change.op === 'erase' && change.entity === 'candidate') await forgetEarlier(context, record.account, stream, change, oldest);
          await stream.append(record.account, [change], (each) => webhookId(record.destination, each));
        } catch (error) {
          if (signal.aborted) return false; // ended (disabled, removed, stopped): not a failure of the server
          await failed(context, record, row, error);
          return false;
        }
        await context.store.destinations.delivered(record, row.seq, new Date(context.now()).toISOString());
        appended++;
      }
      // Trimmed by time: below the oldest change the feed keeps, once it moved.
      if (appended > 0 && oldest !== null) {
        const held = writerOf(opened, signal); // the connection the appends used
        if (oldest !== held.state.trimmedAt) {
          await (await held.opening).trim(oldest);
          held.state.trimmedAt = oldest;
        }
      }
      return appended > 0;
    },
    halt: () => writer.halt(),
    close: () => writer.close(),
  };
}
