// Bodies deflated on a thread of their own (body-thread.ts), for a bulk load: deflate with the
// dictionary costs about 20 µs of CPU a body, a fifth of a replay's, and on a machine with a
// second core the load's thread need not spend it. The caller asks for a batch's stored forms
// ahead of appending it, and appends the batch before while the thread works; a request the
// thread cannot answer fails, so that no row is ever stored without its body.
import { Worker } from 'node:worker_threads';
import { threadModule, type ErrorShape } from '../threads.js';
import type { StoredBody } from './bodies.js';

// The thread's young generation, in MB: what it allocates for a batch is garbage once answered, and
// with V8's default (16 MB a semi-space) the thread held about 40 MB more of a replay's peak.
const YOUNG_MB = 1;

/** Bodies packed in one buffer: `ends[i]` is where body i ends; `codecs`, in an answer, the codec of each. */
export interface PackedBodies {
  bytes: ArrayBuffer;
  ends: Uint32Array<ArrayBuffer>;
  codecs?: Uint8Array<ArrayBuffer>;
}

export interface DeflateRequest {
  id: number;
  bodies: PackedBodies;
}

export type DeflateAnswer = { id: number; ok: true; bodies: PackedBodies } | { id: number; ok: false; error: ErrorShape };

/** The thread failed or ended before answering: the bodies it held are not stored, and the work that waited for them must fail. */
class BodyThreadError extends Error {
  override name = 'BodyThreadError';
}

export interface BodyDeflater {
  /** The stored forms of `raws`, in their order: exactly `storedBody`'s. */
  deflate(raws: readonly Uint8Array[]): Promise<StoredBody[]>;
  /** Ends the thread; requests in flight fail. */
  close(): Promise<void>;
}

interface Pending {
  count: number;
  resolve(bodies: StoredBody[]): void;
  reject(error: Error): void;
}

type ThreadLife = { state: 'running'; worker: Worker } | { state: 'failed'; error: BodyThreadError } | { state: 'closed' };

/** A thread deflating bodies, started now; undefined where its module cannot be found (the caller deflates them itself). */
export function startBodyDeflater(): BodyDeflater | undefined {
  const module = threadModule(import.meta.url, 'body-thread.js');
  if (module === undefined) return undefined;
  const worker = new Worker(module, { stdout: false, stderr: false, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_MB } });
  const pending = new Map<number, Pending>();
  let life: ThreadLife = { state: 'running', worker };
  let nextId = 1;
  const fail = (error: BodyThreadError): void => {
    if (life.state !== 'running') return;
    life = { state: 'failed', error };
    for (const p of pending.values()) p.reject(error);
    pending.clear();
    void worker.terminate().catch(() => undefined);
  };
  worker.on('message', (answer: DeflateAnswer) => {
    const p = pending.get(answer.id);
    if (p === undefined) return;
    pending.delete(answer.id);
    if (pending.size === 0) worker.unref();
    if (!answer.ok) p.reject(new BodyThreadError(`the thread deflating bodies failed: ${answer.error.message}`));
    else if (answer.bodies.ends.length === p.count && answer.bodies.codecs?.length === p.count) p.resolve(unpacked(answer.bodies));
    else {
      const error = new BodyThreadError(`the thread deflating bodies answered ${answer.bodies.ends.length} bodies for ${p.count}`);
      p.reject(error);
      fail(error);
    }
  });
  worker.on('error', (error) => fail(new BodyThreadError(`the thread deflating bodies failed: ${error.message}`)));
  worker.on('exit', (code) => fail(new BodyThreadError(`the thread deflating bodies exited (code ${code}) before it answered`)));
  worker.unref();
  return {
    deflate(raws) {
      if (life.state === 'failed') return Promise.reject(life.error);
      if (life.state === 'closed') return Promise.reject(new BodyThreadError('the thread deflating bodies is closed'));
      const id = nextId++;
      const bodies = packed(raws);
      return new Promise((resolve, reject) => {
        pending.set(id, { count: raws.length, resolve, reject });
        worker.ref();
        worker.postMessage({ id, bodies } satisfies DeflateRequest, [bodies.bytes, bodies.ends.buffer]);
      });
    },
    async close() {
      if (life.state === 'running') {
        for (const p of pending.values()) p.reject(new BodyThreadError('the thread deflating bodies is closed'));
        pending.clear();
      }
      life = { state: 'closed' };
      await worker.terminate();
    },
  };
}

/** `raws` packed in one buffer, with where each ends: a request, and the bytes of an answer. */
export function packed(raws: readonly Uint8Array[]): PackedBodies {
  const bytes = new Uint8Array(new ArrayBuffer(raws.reduce((total, raw) => total + raw.byteLength, 0)));
  const ends = new Uint32Array(raws.length);
  let at = 0;
  raws.forEach((raw, i) => {
    bytes.set(raw, at);
    at += raw.byteLength;
    ends[i] = at;
  });
  return { bytes: bytes.buffer, ends };
}

/** Each body's stored form, its bytes a view of the answer's buffer. */
function unpacked({ bytes, ends, codecs }: PackedBodies): StoredBody[] {
  let start = 0;
  return Array.from(ends, (end, i) => {
    const body = { codec: codecs![i]!, bytes: Buffer.from(bytes, start, end - start) };
    start = end;
    return body;
  });
}
