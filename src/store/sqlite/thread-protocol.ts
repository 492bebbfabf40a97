// The messages between a threaded SQLite store (src/store/sqlite/threaded.ts) and the worker
// that owns its connection (thread-worker.ts).
import { StoreUnavailableError } from '../store.js';

export type Request =
  | { id: number; op: 'call'; method: string; args: unknown[] }
  | { id: number; op: 'begin'; tx: number; options: { durable?: boolean } }
  | { id: number; op: 'tx'; tx: number; method: string; args: unknown[] }
  | { id: number; op: 'end'; tx: number; commit: boolean };

export type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: SerialisedError };

export interface SerialisedError {
  name: string;
  message: string;
  code?: string;
}

export interface WorkerSetup {
  path: string;
  location: string;
  busyTimeoutMs: number;
}

export function serialiseError(error: unknown): SerialisedError {
  const e = error as { name?: string; message?: string; code?: unknown };
  return { name: e?.name ?? 'Error', message: e?.message ?? String(error), ...(typeof e?.code === 'string' && { code: e.code }) };
}

export function reviveError(error: SerialisedError): Error {
  if (error.name === 'StoreUnavailableError') return new StoreUnavailableError(error.code ?? 'UNAVAILABLE', error.message);
  const revived = new Error(error.message) as Error & { code?: string };
  revived.name = error.name;
  if (error.code !== undefined) revived.code = error.code;
  return revived;
}

/**
 * Structured cloning turns Buffers into plain Uint8Arrays: turn them back, without copying, so
 * that better-sqlite3 binds them as BLOBs and callers get the Buffers they had.
 */
export function withBuffers<T>(value: T): T {
  if (value instanceof Uint8Array) return (Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength)) as T;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = withBuffers(value[i]);
    return value;
  }
  if (value instanceof Map) {
    for (const [k, v] of value) value.set(k, withBuffers(v));
    return value;
  }
  if (value !== null && typeof value === 'object' && !(value instanceof Set)) {
    for (const key of Object.keys(value)) (value as Record<string, unknown>)[key] = withBuffers((value as Record<string, unknown>)[key]);
  }
  return value;
}
