// Options since removed: gone from the types, so that TypeScript names them at the call site. A type
// test (.test-d.ts): `npm run typecheck` checks it; vitest does not run it, as it asserts nothing at run time.
// (serve's removed flags are ignored with a warning: test/integration/cli-config.test.ts.)
import { describe, expectTypeOf, it } from 'vitest';
import type { ReceiverOptions } from '../../src/index.js';
import type { StoreOptions } from '../../src/store/open.js';

describe('removed options', () => {
  it('sqliteThread (SQLite in a worker thread) is no longer an option of createReceiver, nor thread of the store', () => {
    expectTypeOf<ReceiverOptions>().not.toHaveProperty('sqliteThread');
    expectTypeOf<StoreOptions>().not.toHaveProperty('thread');
  });
});
