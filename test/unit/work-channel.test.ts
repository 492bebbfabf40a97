// The PostgreSQL wake-up channel gives its listening connection back once, whatever follows: an
// error on it after the store stopped listening (the server going away as the store closes) must
// not release it again, which pg answers by throwing, uncaught, out of the event handler.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { Engine } from '../../src/store/postgres/session.js';
import { createWorkChannel, onWork, stopListening } from '../../src/store/postgres/work-channel.js';

/** A pooled client as pg gives it: `release` twice throws, as pg's does. */
function fakeClient() {
  const client = Object.assign(new EventEmitter(), {
    releases: 0,
    query: async () => ({ rows: [] }),
    release() {
      client.releases++;
      if (client.releases > 1) throw new Error('Release called on client which has already been released to the pool.');
    },
  });
  return client;
}

describe('the PostgreSQL work channel', () => {
  it('releases its listening connection once: an error after stopListening is not a second release', async () => {
    const client = fakeClient();
    const engine = { pool: { connect: async () => client }, guarded: new WeakSet(), closed: false } as unknown as Engine;
    const channel = createWorkChannel(engine);
    onWork(channel, () => undefined);
    await channel.listening;
    expect(channel.listener).toBe(client);
    stopListening(channel);
    (engine as { closed: boolean }).closed = true;
    expect(() => client.emit('error', new Error('terminating connection due to administrator command'))).not.toThrow();
    expect(client.releases).toBe(1);
  });
});
