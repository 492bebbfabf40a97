// Wake-ups between processes (LISTEN/NOTIFY): a commit that stores or requeues work announces it,
// and every other process's listeners are called; a transaction that records changes notifies
// their account at its commit (the destinations' delivery listens). Pollers behind both pick the
// work up anyway: a notification lost is only a delay. One listening connection serves both.
import type { PoolClient } from './connection.js';
import { checkOut, type Engine } from './session.js';

const WORK_CHANNEL = 'prequal_hooks_work';
/** Notified by the transaction that records changes (postgres/changes.ts), its account as the payload. */
export const CHANGES_CHANNEL = 'prequal_hooks_changes';

/** One store's listeners, its one listening connection (re-established when it drops), and its announcing. */
export interface WorkChannel {
  readonly engine: Engine;
  readonly listeners: Set<() => void>;
  /** Called with the account whose changes a transaction committed, in any process ('' for any: the connection was established again). */
  readonly changeListeners: Set<(account: string) => void>;
  listener: PoolClient | undefined;
  listening: Promise<void> | undefined;
  announcing: boolean;
  announceAgain: boolean;
}

export function createWorkChannel(engine: Engine): WorkChannel {
  return {
    engine,
    listeners: new Set(),
    changeListeners: new Set(),
    listener: undefined,
    listening: undefined,
    announcing: false,
    announceAgain: false,
  };
}

/** Calls `callback` on each announcement from any process; returns the unsubscribe function. */
export function onWork(channel: WorkChannel, callback: () => void): () => void {
  channel.listeners.add(callback);
  listen(channel);
  return () => {
    channel.listeners.delete(callback);
  };
}

/** Calls `callback` with the account each time a transaction of any process commits changes; returns the unsubscribe function. */
export function onChanges(channel: WorkChannel, callback: (account: string) => void): () => void {
  channel.changeListeners.add(callback);
  listen(channel);
  return () => {
    channel.changeListeners.delete(callback);
  };
}

function listen(channel: WorkChannel): void {
  const unheard = channel.listeners.size === 0 && channel.changeListeners.size === 0;
  if (channel.engine.closed || channel.listener !== undefined || channel.listening !== undefined || unheard) return;
  const retry = () => {
    if (!channel.engine.closed) setTimeout(() => listen(channel), 1000).unref();
  };
  const wake = () => channel.listeners.forEach((l) => l());
  const heard = (message: { channel: string; payload?: string }) => {
    if (message.channel === CHANGES_CHANNEL) channel.changeListeners.forEach((l) => l(message.payload ?? ''));
    else wake();
  };
  channel.listening = (async () => {
    let c: PoolClient | undefined;
    try {
      c = await checkOut(channel.engine);
      const client = c;
      client.on('notification', heard);
      // An error after the store closed (the server stopping) finds the connection released already.
      client.on('error', () => {
        dropListener(channel, client);
        retry();
      });
      await client.query(`LISTEN ${WORK_CHANNEL}; LISTEN ${CHANGES_CHANNEL}`);
      channel.listener = client;
      wake(); // whatever was announced while we were not listening
      channel.changeListeners.forEach((l) => l(''));
    } catch {
      if (c !== undefined) dropListener(channel, c);
      retry();
    } finally {
      channel.listening = undefined;
    }
  })();
}

/** Connections given back already: a connection is released once, however many errors and stops follow. */
const dropped = new WeakSet<PoolClient>();

function dropListener(channel: WorkChannel, client: PoolClient): void {
  if (channel.listener === client) channel.listener = undefined;
  if (dropped.has(client)) return;
  dropped.add(client);
  client.release(true);
}

/** Tells every listening process (this one too) that work was stored; announcements made meanwhile become one more. */
export function announceWork(channel: WorkChannel): void {
  if (channel.engine.closed) return;
  if (channel.announcing) {
    channel.announceAgain = true;
    return;
  }
  channel.announcing = true;
  void channel.engine.pool
    .query(`NOTIFY ${WORK_CHANNEL}`)
    .catch(() => undefined) // the pollers behind the notifications pick the work up anyway
    .finally(() => {
      channel.announcing = false;
      if (channel.announceAgain) {
        channel.announceAgain = false;
        announceWork(channel);
      }
    });
}

/** Drops the listening connection (the store is closing). */
export function stopListening(channel: WorkChannel): void {
  if (channel.listener !== undefined) dropListener(channel, channel.listener);
}
