// What the receiver's thread and the delivery thread (delivery-thread.ts) say to each other. The
// thread reads on its own connection and sends; its writes (leases, a round's settlements, a state
// changed) come back as requests, by method name, to the receiver's writer, behind the intake's
// group commits. Both sides take the names from here, so a write can only be one the port has.
import type { ConnectionRecipe } from '../store/feature-sql.js';
import type { NetworkRules } from './network-policy.js';
import type { DestinationsPort } from './sql.js';
import type { ErrorShape } from '../threads.js';

/** What the thread is started with: paths and settings, never a secret but the database URL's (not logged). */
export interface DeliveryThreadData {
  /** Its own connection to the receiver's database, opened read-only. */
  connection: ConnectionRecipe;
  /** The accounts key file, read by the thread (as the receiver would) to open the destinations' secrets. */
  keyFile?: string;
  databaseFile?: string;
  network: NetworkRules;
  pollMs?: number;
  /** Who holds the leases: the same for a thread started again, so that it takes them back at once. */
  owner: string;
}

/** The port's writes the thread asks the receiver's writer for; its reads stay on its own connection. */
export const DESTINATION_WRITES = ['lease', 'release', 'commit', 'setState', 'rewind', 'delivered', 'failed'] as const;

export type DestinationWrite = (typeof DESTINATION_WRITES)[number] & keyof DestinationsPort;

export function isDestinationWrite(method: unknown): method is DestinationWrite {
  return (DESTINATION_WRITES as readonly unknown[]).includes(method);
}

/** An error as it crosses the threads. */
export type Outcome = 'delivered' | 'failed' | 'dead';

/** From the thread. */
export type ThreadMessage =
  | { type: 'write'; id: number; method: DestinationWrite; args: unknown[] }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; fields: object; message: string }
  | { type: 'counts'; rounds: number; settled: Array<{ account: string; destination: string; outcome: Outcome; count: number }> }
  | { type: 'stopped' };

/** To the thread. */
export type ReceiverMessage =
  | { type: 'written'; id: number; ok: true; value: unknown }
  | { type: 'written'; id: number; ok: false; error: ErrorShape }
  | { type: 'wake' }
  | { type: 'stop'; timeoutMs: number };

/** The error as the thread's caller sees it: its message, name and code. */
export function errorOf(shape: ErrorShape): Error {
  return Object.assign(new Error(shape.message), shape.name === 'Error' ? {} : { name: shape.name }, shape.code && { code: shape.code });
}
