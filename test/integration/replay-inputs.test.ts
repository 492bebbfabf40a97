import { describe, expect, it } from 'vitest';
import { createReceiver } from '../../src/receiver.js';
import { replay, ReplayInputError } from '../../src/replay/index.js';
import { FIXTURES_DIR, sampleEvent } from '../../src/testing/index.js';

describe('replay of an input that cannot be read', () => {
  it('rejects, naming it, after replaying the readable inputs (replay())', async () => {
    const error = await replay([`${FIXTURES_DIR}scenarios/nope.ndjson`, sampleEvent('credits.low')], { database: ':memory:' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplayInputError);
    expect((error as ReplayInputError).message).toMatch(/nope\.ndjson \(ENOENT/);
    expect((error as ReplayInputError).summary).toMatchObject({ received: 1, projected: 1 });
  });

  it('rejects the same way from receiver.replay(), and the readable events are projected', async () => {
    const receiver = createReceiver({ database: ':memory:', secret: 's' });
    await expect(receiver.replay(['fixtures/scenarios/missing.ndjson', sampleEvent('credits.low')])).rejects.toThrow(ReplayInputError);
    expect((await receiver.query.getCredits()).credits_remaining).not.toBeNull();
    await receiver.close();
  });
});
