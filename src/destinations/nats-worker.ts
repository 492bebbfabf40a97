// A NATS JetStream destination's delivery (docs/destinations.md, "NATS JetStream"): its queued
// changes published to its subject one at a time in `seq` order, from the first queued one, and
// only when that one is due; each counted delivered once a stream acknowledged it, and settled by
// seq at once. A failed publish is tried again on the destination's schedule, capped at its last
// step, and never set aside (as a Redis stream's: a consumer reads one ordered log). A subject no
// stream captures pauses the destination at once, its reason saying so; the probe resumes it once
// the operator has added the stream.
import { changeOf, type Change } from '../project/changes.js';
import type { DestinationRecord, QueuedSend } from './sql.js';
import { maskedUrl } from './masked-url.js';
import { errorText } from './errors.js';
import type { OpenedDestination } from './registry.js';
import { batchOf, settleFailure, type RedisContext, type RedisSender } from './redis-worker.js';
import { NoStreamError, openSubjectPublisher, type SubjectPublisher } from './nats-stream.js';
import { keptConnection } from './kept-connection.js';
import { webhookId } from './signing.js';
import { count } from '../words.js';

/** How far before an erased person's earliest change their messages are looked for: the NATS server's clock may differ from ours. */
const FORGET_CLOCK_MARGIN_MS = 60 * 60_000;

export type NatsContext = RedisContext;

/** The publisher of one destination, opened at first need and kept while its URL, subject and certificate stay. */
export type NatsSender = RedisSender;

async function failed(context: NatsContext, record: DestinationRecord, row: QueuedSend, error: unknown): Promise<void> {
  const message = errorText(error instanceof Error ? error.message : String(error));
  const missing = error instanceof NoStreamError;
  // No stream: paused at once (not after the breaker's failures), its reason the one operators must read.
  await settleFailure(context, record, row, message, missing ? 2 ** 31 - 1 : context.pauseAfter);
  if (missing && record.state_reason !== message)
    await context.store.destinations.setState(record, 'paused', message, new Date(context.now()).toISOString());
  const where = { destination: record.destination, account: record.account, seq: row.seq, url: maskedUrl(record.url) };
  if (missing) context.logger.error({ ...where, error: message }, 'destination paused: no JetStream stream captures its subject');
  else
    context.logger.warn(
      { ...where, error: message, attempts: row.attempts + 1 },
      'destination: publish to NATS JetStream failed; tried again later (a NATS destination never sets a change aside)',
    );
}

export function natsSender(context: NatsContext): NatsSender {
  // `checked`: whether the subject's last message was looked at since the connection was made.
  const publisher = keptConnection<SubjectPublisher, { checked: boolean }>(() => ({ checked: false }));

  const publisherOf = (opened: OpenedDestination, signal: AbortSignal) =>
    publisher.of(JSON.stringify([opened.url, opened.subject, opened.tls]), () =>
      openSubjectPublisher(opened.url, opened.subject!, {
        timeoutMs: context.timeoutMs,
        signal,
        policy: context.policy,
        ...(opened.tls !== undefined && { tls: opened.tls }),
      }),
    );

  /**
   * Before a person's `erase` is published, their earlier changes' messages leave the stream
   * (docs/personal-data.md): a consumer reading it from now on finds nothing of them, and the
   * `erase` tells one that read them to delete its copies. Looked for from an hour before the
   * earliest of them was recorded (a message is published after its change commits; the hour
   * allows for the NATS server's clock).
   */
  async function forgetEarlier(record: DestinationRecord, writer: SubjectPublisher, erase: Change): Promise<void> {
    const earlier = (await context.store.forAccount(record.account).people.changesOf(erase.id)).filter((c) => c.seq < erase.seq);
    if (earlier.length === 0) return;
    const since = new Date(Math.min(...earlier.map((c) => Date.parse(c.at))) - FORGET_CLOCK_MARGIN_MS).toISOString();
    const forgotten = await writer.forget(new Set(earlier.map((c) => webhookId(record.destination, changeOf(c)))), since);
    context.logger.info(
      { destination: record.destination, account: record.account, seq: erase.seq, forgotten },
      `destination: ${count(forgotten, 'earlier message')} of an erased person deleted from its NATS stream`,
    );
  }

  async function publishOne(record: DestinationRecord, opened: OpenedDestination, change: Change, row: QueuedSend, signal: AbortSignal) {
    const held = publisherOf(opened, signal);
    const writer = await held.opening;
    if (writer.closed) {
      publisher.drop();
      throw new Error('the connection to the NATS server was closed');
    }
    // Past the duplicate window a redone publish would be stored twice: the first of a connection
    // (a restart, a crash) and any after a failure look first at the subject's last message.
    const check = !held.state.checked || row.attempts > 0;
    // Checked again unless this change is settled delivered: a settling that fails leaves it published and queued.
    held.state.checked = false;
    if (change.op === 'erase') await forgetEarlier(record, writer, change);
    const id = webhookId(record.destination, change);
    await writer.publish(JSON.stringify({ account: record.account, ...change }), id, check);
    return held;
  }

  return {
    async send(record, opened, { onlyOne, signal }) {
      const { rows } = await batchOf(context, record, onlyOne);
      let published = 0;
      for (const { row, change } of rows) {
        if (signal.aborted) return false;
        let held;
        try {
          held = await publishOne(record, opened, change, row, signal);
        } catch (error) {
          if (signal.aborted) return false; // ended (disabled, removed, stopped): not a failure of the server
          await failed(context, record, row, error);
          return false;
        }
        await context.store.destinations.delivered(record, row.seq, new Date(context.now()).toISOString());
        held.state.checked = true;
        published++;
      }
      return published > 0;
    },
    halt: () => publisher.halt(),
    close: () => publisher.close(),
  };
}
