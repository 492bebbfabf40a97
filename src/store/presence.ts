// Which receivers are running on a database. Each receiver that projects keeps a heartbeat row;
// commands that write events (replay, dead-letters reprocess) leave their projection to a running
// one, so that its handlers run for them as for webhooks.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { describeStorageError } from './errors.js';
import type { PresencePort } from './write-ports.js';
import type { ReceiverRow } from './rows.js';
import { withDeadline } from '../deadline.js';

/** How often a receiver refreshes its heartbeat (ms), unless told otherwise. */
export const HEARTBEAT_MS = 5000;
/** Beats a receiver may miss (a long pause, a locked file) before others count it gone. */
export const MISSED_BEATS = 3;

/** Whether the row's receiver counts as running: its last beat is at most MISSED_BEATS of its intervals old. */
export function isRunning(receiver: ReceiverRow): boolean {
  return receiver.age_ms <= MISSED_BEATS * receiver.every_ms;
}

/** The receivers on the database: those running (the most recently seen first), and those whose beats stopped. */
export async function receiversOn(store: Pick<PresencePort, 'receivers'>): Promise<{ running: ReceiverRow[]; gone: ReceiverRow[] }> {
  const all = await store.receivers();
  return { running: all.filter(isRunning), gone: all.filter((r) => !isRunning(r)) };
}

export interface Presence {
  /** This process's receiver id. */
  readonly id: string;
  /** Settles once the first beat was written or failed, or after one interval (never rejects). */
  readonly firstBeat: Promise<void>;
  /** Stops beating and removes the row (never rejects; a failure is logged at debug). */
  stop(): Promise<void>;
}

/**
 * Keeps this receiver's heartbeat row: written at once, refreshed every `everyMs` off the request
 * path by a timer that never keeps the process alive, removed by `stop`. A beat that fails (a
 * locked file, a database away, a read-only one) is logged at debug and the next one retries:
 * it never holds up or fails the intake. At the start, the rows of receivers counted gone are removed.
 */
export function keepPresence(store: PresencePort, options: { everyMs?: number; logger: Pick<Logger, 'debug'> }): Presence {
  const everyMs = options.everyMs ?? HEARTBEAT_MS;
  const row = {
    receiver_id: `${process.pid}-${randomBytes(6).toString('hex')}`,
    pid: process.pid,
    host: hostname(),
    started_at: new Date().toISOString(),
    every_ms: everyMs,
  };
  let stopped = false;
  let inFlight: Promise<void> | undefined;
  const beat = (): Promise<void> => {
    if (stopped || inFlight !== undefined) return inFlight ?? Promise.resolve();
    inFlight = store
      .beat(row)
      .catch((error: unknown) =>
        options.logger.debug({ code: describeStorageError(error).code }, 'receiver heartbeat not written; the next one retries'),
      )
      .finally(() => (inFlight = undefined));
    return inFlight;
  };
  // Whoever waits for the first beat (ready()) waits one interval at most, whatever the database does.
  const firstBeat = withDeadline(
    beat().then(() => forgetGone(store, row.receiver_id, options.logger)),
    everyMs,
    { unref: true },
  ).then(() => undefined);
  const timer = setInterval(() => void beat(), everyMs);
  timer.unref();
  return {
    id: row.receiver_id,
    firstBeat,
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      // A beat still on its way would put the row back after the removal.
      await inFlight;
      await store
        .forgetReceivers([row.receiver_id])
        .catch((error: unknown) =>
          options.logger.debug({ code: describeStorageError(error).code }, 'receiver heartbeat not removed; it goes stale by itself'),
        );
    },
  };
}

/** Removes the rows of receivers counted gone (killed, or their machine lost): the table holds the living, and the recently lost. */
async function forgetGone(store: PresencePort, self: string, logger: Pick<Logger, 'debug'>): Promise<void> {
  try {
    const { gone } = await receiversOn(store);
    const ids = gone.filter((r) => r.receiver_id !== self).map((r) => r.receiver_id);
    if (ids.length > 0) await store.forgetReceivers(ids);
  } catch (error) {
    logger.debug({ code: describeStorageError(error).code }, 'could not tidy the heartbeats of stopped receivers');
  }
}
