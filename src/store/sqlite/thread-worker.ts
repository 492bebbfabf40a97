// The worker thread that owns a threaded SQLite store's connection: statements, commits and
// fsyncs run here, so that the event loop of the process never waits on the disk.
import { parentPort, workerData } from 'node:worker_threads';
import type { WriteTx } from '../store.js';
import { openDatabase } from './database.js';
import { createSqliteStore } from './store.js';
import { serialiseError, withBuffers, type Reply, type Request, type WorkerSetup } from './thread-protocol.js';

const setup = workerData as WorkerSetup;
const port = parentPort!;
const store = createSqliteStore(openDatabase(setup.path, { busyTimeoutMs: setup.busyTimeoutMs }), {
  location: setup.location,
  busyTimeoutMs: setup.busyTimeoutMs,
  ownsConnection: true,
  readonly: false,
});

/** Transactions the main thread has open: their operations, and how to end them. */
const open = new Map<number, { tx: WriteTx; end: (commit: boolean) => void; done: Promise<unknown> }>();
const ROLLBACK = Symbol('rollback');

const reply = (message: Reply) => port.postMessage(message);
const fail = (id: number, error: unknown) => reply({ id, ok: false, error: serialiseError(error) });

port.on('message', (request: Request) => {
  switch (request.op) {
    case 'call': {
      const method = (store as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[request.method];
      if (typeof method !== 'function') return fail(request.id, new Error(`no store method ${request.method}`));
      void method.apply(store, withBuffers(request.args)).then(
        (value) => {
          reply({ id: request.id, ok: true, value });
          if (request.method === 'close') port.close();
        },
        (error: unknown) => fail(request.id, error),
      );
      return;
    }
    case 'begin': {
      let entered = false;
      const done = store.write(
        (tx) =>
          new Promise<void>((resolve, reject) => {
            entered = true;
            open.set(request.tx, { tx, end: (commit) => (commit ? resolve() : reject(ROLLBACK)), done });
            reply({ id: request.id, ok: true, value: null });
          }),
        request.options,
      );
      // A transaction that could not begin (the lock stayed taken) fails its begin; one that
      // began reports at its end.
      done.catch((error: unknown) => {
        if (!entered) fail(request.id, error);
      });
      return;
    }
    case 'tx': {
      const entry = open.get(request.tx);
      if (entry === undefined) return fail(request.id, new Error(`transaction ${request.tx} is not open`));
      const method = (entry.tx as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[request.method]!;
      void method.apply(entry.tx, withBuffers(request.args)).then(
        (value) => reply({ id: request.id, ok: true, value }),
        (error: unknown) => fail(request.id, error),
      );
      return;
    }
    case 'end': {
      const entry = open.get(request.tx);
      if (entry === undefined) return fail(request.id, new Error(`transaction ${request.tx} is not open`));
      open.delete(request.tx);
      entry.end(request.commit);
      entry.done.then(
        () => reply({ id: request.id, ok: true, value: null }),
        (error: unknown) => (error === ROLLBACK ? reply({ id: request.id, ok: true, value: null }) : fail(request.id, error)),
      );
      return;
    }
  }
});

