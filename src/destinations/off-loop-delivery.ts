// The destinations' delivery off the intake's event loop: a thread (delivery-thread.ts) reads,
// signs and sends on a connection of its own, at a lower CPU priority; this side does its writes on
// the receiver's writer, each after the webhooks waiting for theirs (a round's settlements are one
// transaction), wakes it when a commit records changes, and logs and counts for it. A thread that
// fails is started again a second later with the same lease owner; what it had sent and not
// settled is sent again (at least once, with the same webhook-id).
import { randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { withDeadline } from '../deadline.js';
import type { Logger } from '../logging.js';
import type { FeatureSql } from '../store/feature-sql.js';
import type { WorkSignals } from '../store/write-ports.js';
import { errorShape, threadModule } from '../threads.js';
import { DEFAULT_POLL_MS, yieldToIntake, type DeliveryLoop } from './delivery-loop.js';
import {
  isDestinationWrite,
  type DeliveryThreadData,
  type Outcome,
  type ReceiverMessage,
  type ThreadMessage,
} from './delivery-protocol.js';
import type { NetworkRules } from './network-policy.js';
import { destinationsOf } from './sql.js';

export interface DeliveryThreadOptions {
  store: { readonly featureSql: FeatureSql; onChanges: WorkSignals['onChanges'] };
  keyFile?: string;
  databaseFile?: string;
  network: NetworkRules;
  pollMs?: number;
  logger: Logger;
  /** Whether webhooks wait for their write: the thread's writes wait for them (up to 100 ms). */
  intakeBusy?: () => boolean;
  onSettled: (account: string, destination: string, outcome: Outcome) => void;
  onRound?: () => void;
}

/**
 * A write of the thread waits for the intake's this long at most (ms). What it waits for is one
 * small transaction (a round's settlements), its reads and sends done elsewhere meanwhile; up to
 * the in-thread loop's 100 ms a write, a steady flood held the rounds to ten a second and the
 * changes waited (bench:destinations at 200/s: delay p99 0.7–2.5 s, against 0.19–0.27 s with 20).
 */
const WRITE_YIELD_MS = 20;

/** How long a thread that failed waits before it is started again (ms): doubled while it keeps failing before a round, up to the most. */
const RESTART_MS = 1000;
const RESTART_MOST_MS = 30_000;

/** The thread's life: waiting for a first destination, running, waiting to be started again after a failure, or stopped. */
type ThreadLife = { state: 'running'; worker: Worker } | { state: 'waiting' | 'restarting'; timer: NodeJS.Timeout } | { state: 'stopped' };

interface DeliveryThread {
  options: DeliveryThreadOptions;
  module: URL;
  data: DeliveryThreadData;
  life: ThreadLife;
  /** The wait before the next start after a failure. */
  restartMs: number;
  /** Ends the yields of writes once stopped. */
  stopped: AbortController;
}

/** One write of the thread, on the receiver's writer once the intake has had its turn; its answer posted back. */
async function writeFor(thread: DeliveryThread, worker: Worker, request: Extract<ThreadMessage, { type: 'write' }>): Promise<void> {
  let answer: ReceiverMessage;
  try {
    if (!isDestinationWrite(request.method)) throw new TypeError(`the delivery thread has no write ${String(request.method)}`);
    await yieldToIntake(thread.options.intakeBusy, thread.stopped.signal, WRITE_YIELD_MS);
    const port = destinationsOf(thread.options.store) as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    answer = { type: 'written', id: request.id, ok: true, value: await port[request.method]!(...request.args) };
  } catch (error) {
    answer = { type: 'written', id: request.id, ok: false, error: errorShape(error) };
  }
  try {
    worker.postMessage(answer);
  } catch {
    // The thread has ended: what it wrote is written; it reads it again when started.
  }
}

function heard(thread: DeliveryThread, worker: Worker, message: ThreadMessage): void {
  const { logger, onSettled, onRound } = thread.options;
  if (message.type === 'write') void writeFor(thread, worker, message);
  else if (message.type === 'log') logger[message.level](message.fields, message.message);
  else if (message.type === 'counts') {
    if (message.rounds > 0) thread.restartMs = RESTART_MS; // it works: a failure later is waited for from the start
    for (const { account, destination, outcome, count } of message.settled)
      for (let i = 0; i < count; i++) onSettled(account, destination, outcome);
    for (let i = 0; i < message.rounds; i++) onRound?.();
  }
}

function start(thread: DeliveryThread): void {
  const worker = new Worker(thread.module, { workerData: thread.data, stdout: false, stderr: false });
  const life: ThreadLife = { state: 'running', worker };
  worker.on('message', (message: ThreadMessage) => heard(thread, worker, message));
  worker.on('error', (error) =>
    thread.options.logger.error({ err: { message: error.message } }, 'destinations: the delivery thread failed'),
  );
  worker.on('exit', (code) => {
    if (thread.life !== life) return;
    const wait = thread.restartMs;
    thread.restartMs = Math.min(wait * 2, RESTART_MOST_MS);
    thread.options.logger.error({ code }, `destinations: the delivery thread exited; started again in ${wait} ms`);
    thread.life = { state: 'restarting', timer: setTimeout(() => start(thread), wait).unref() };
  });
  // As the loop in this thread was: a receiver left open (a script, a test) is not kept alive by its destinations.
  worker.unref();
  thread.life = life;
}

/** Posts to the running thread, if it is; a thread that just ended is not told. */
function tell(thread: DeliveryThread, message: ReceiverMessage): void {
  if (thread.life.state !== 'running') return;
  try {
    thread.life.worker.postMessage(message);
  } catch {
    // Ended meanwhile: its exit starts it again.
  }
}

/** Stops the thread: its loop waits up to `timeoutMs` for the sends in flight and gives the leases back; ended at most a while after. */
async function stop(thread: DeliveryThread, timeoutMs: number): Promise<void> {
  const life = thread.life;
  thread.life = { state: 'stopped' };
  if (life.state === 'restarting' || life.state === 'waiting') clearTimeout(life.timer);
  if (life.state !== 'running') return thread.stopped.abort();
  const exited = new Promise<void>((resolve) => life.worker.once('exit', () => resolve()));
  life.worker.ref();
  life.worker.postMessage({ type: 'stop', timeoutMs } satisfies ReceiverMessage);
  // Its last writes (settlements, leases given back) are done while it stops; then nothing waits.
  const ended = await withDeadline(exited, timeoutMs + 5000, { unref: true });
  thread.stopped.abort();
  if (ended === undefined) await life.worker.terminate();
}

/**
 * Starts the thread once the database holds a destination, read every `pollMs` until then: a
 * receiver that has none (most) spends no thread on them, nor its isolate's memory and connection.
 */
function startOnceNeeded(thread: DeliveryThread, pollMs: number): void {
  const port = destinationsOf(thread.options.store);
  const check = async () => {
    let any = false;
    try {
      any = (await port.list()).length > 0;
    } catch {
      // The database cannot be read now: read again at the next turn.
    }
    if (thread.life.state !== 'waiting') return;
    if (any) start(thread);
    else thread.life = { state: 'waiting', timer: setTimeout(() => void check(), pollMs).unref() };
  };
  thread.life = { state: 'waiting', timer: setTimeout(() => void check(), 0).unref() };
}

/**
 * The delivery on a thread of its own, when the database can be opened from another thread (a
 * SQLite file in WAL, a PostgreSQL URL) and the thread's module is there; undefined otherwise (a
 * database in memory, a pool given): then the loop runs in this thread (`startDeliveryLoop`).
 */
export function startDeliveryThread(options: DeliveryThreadOptions): DeliveryLoop | undefined {
  const connection = options.store.featureSql.anotherConnection();
  const module = threadModule(import.meta.url, 'delivery-thread.js');
  if (connection === undefined || module === undefined) return undefined;
  const data: DeliveryThreadData = {
    connection,
    ...(options.keyFile !== undefined && { keyFile: options.keyFile }),
    ...(options.databaseFile !== undefined && { databaseFile: options.databaseFile }),
    network: options.network,
    ...(options.pollMs !== undefined && { pollMs: options.pollMs }),
    owner: `${process.pid}-${randomUUID()}`,
  };
  const thread: DeliveryThread = {
    options,
    module,
    data,
    life: { state: 'stopped' },
    restartMs: RESTART_MS,
    stopped: new AbortController(),
  };
  startOnceNeeded(thread, options.pollMs ?? DEFAULT_POLL_MS);
  // The commits of a turn wake it once.
  let waking = false;
  const unsubscribe = options.store.onChanges(() => {
    if (waking) return;
    waking = true;
    setImmediate(() => {
      waking = false;
      tell(thread, { type: 'wake' });
    });
  });
  return {
    async stop(timeoutMs) {
      unsubscribe();
      await stop(thread, timeoutMs);
    },
  };
}
