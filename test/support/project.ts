// Projects a store's pending rows as the dispatcher does, through the real projection loop, for
// tests that feed a store directly: every account with work in turn, or one account's alone.
import { createHandlerRegistry, type HandlerRegistry } from '../../src/dispatch/handlers.js';
import { createProjectionLoop } from '../../src/dispatch/projection-loop.js';
import type { Store } from '../../src/store/store.js';

export interface ProjectOptions {
  handlers?: HandlerRegistry;
  now?: () => number;
  batchSize?: number;
  /** Only the store's own account (the loop otherwise takes every account with work, in turn). */
  ownAccountOnly?: boolean;
}

export async function projectPending(store: Store, options: ProjectOptions = {}): Promise<void> {
  const stopping = new AbortController();
  const loop = createProjectionLoop(
    {
      store: options.ownAccountOnly
        ? { forAccount: () => store, accountsWithWork: async () => ({ projection: [store.account], handlers: [] }) }
        : store,
      handlers: options.handlers ?? createHandlerRegistry(),
      logger: { warn: () => undefined },
      now: options.now ?? Date.now,
      stopping: stopping.signal,
      handlersDue: () => undefined,
    },
    { batchSize: options.batchSize ?? 4 },
  );
  loop.notify();
  await loop.onIdle();
  stopping.abort();
}
