import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultStreamName, openStreamWriter, StreamNotOursError } from '../../src/destinations/redis-stream.js';
import { webhookId } from '../../src/destinations/signing.js';
import type { Change } from '../../src/project/changes.js';
import { candidateRow } from '../support/changes.js';
import { hasRedis, startRedis, type RedisUnderTest } from '../support/redis-server.js';

const change = (seq: number, id = `cand-${seq}`): Change => ({
  seq,
  entity: 'candidate',
  id,
  op: 'upsert',
  row: candidateRow({ candidate_id: id, campaign_id: 'cmp_A', interview_score: seq }),
  at: '2026-11-28T00:00:00.000Z',
  events: [`${seq}`.padStart(64, '0')],
});

const idOf = (each: Change) => webhookId('dst_test', each);

describe.skipIf(!hasRedis())('a Redis stream as a destination', () => {
  let redis: RedisUnderTest;
  let reader: ReturnType<typeof createClient>;
  beforeAll(async () => {
    redis = await startRedis();
    reader = createClient({ url: redis.url });
    await reader.connect();
  });
  afterAll(async () => {
    await reader?.close();
    await redis?.stop();
  });
  const entries = async (stream: string) => (await reader.xRange(stream, '-', '+')) ?? [];

  it('appends each change under <seq>-0 with the change as the HTTP body carries it', async () => {
    const stream = defaultStreamName('agency-a');
    expect(stream).toBe('prequal-hooks:agency-a:changes');
    const writer = await openStreamWriter(redis.url, stream);
    expect(await writer.append('agency-a', [change(1), change(2), change(5)], idOf)).toBe(5);
    await writer.close();
    const read = await entries(stream);
    expect(read.map((e) => e.id)).toEqual(['1-0', '2-0', '5-0']);
    expect(JSON.parse(read[2]!.message.change!)).toEqual({ ...change(5), account: 'agency-a' });
    expect(read[0]!.message).toMatchObject({
      entity: 'candidate',
      id: 'cand-1',
      op: 'upsert',
      account: 'agency-a',
      webhook_id: webhookId('dst_test', change(1)),
    });
  });

  it("refuses to count as appended an entry it did not write: another's at the change's id, or a stream already past it", async () => {
    const stream = 'taken-stream';
    // Someone else's entries: one at 1000-0, as a new user's Redis held by accident.
    await reader.xAdd(stream, '1000-0', { note: 'not ours' });
    const writer = await openStreamWriter(redis.url, stream);
    const refused = writer.append('default', [change(1), change(2)], idOf);
    await expect(refused).rejects.toBeInstanceOf(StreamNotOursError);
    await expect(refused).rejects.toThrow(/"taken-stream" already holds entries up to 1000-0 that this destination did not write/);
    // Another destination's entry at the very id: not ours either.
    const shared = 'shared-stream';
    const other = await openStreamWriter(redis.url, shared);
    await other.append('default', [change(3)], (each) => webhookId('dst_other', each));
    await expect(writer.append('default', [change(3)], idOf)).rejects.toBeInstanceOf(StreamNotOursError);
    // An entry written by 0.5.0 (no webhook_id) for this very change is ours.
    const old = 'old-stream';
    const entry = change(4);
    await reader.xAdd(old, '4-0', {
      change: JSON.stringify({ ...entry, account: 'default' }),
      entity: 'candidate',
      id: 'cand-4',
      op: 'upsert',
      account: 'default',
    });
    const upgraded = await openStreamWriter(redis.url, old);
    expect(await upgraded.append('default', [entry, change(5)], idOf)).toBe(5);
    await Promise.all([writer.close(), other.close(), upgraded.close()]);
    expect((await entries(stream)).map((e) => e.id)).toEqual(['1000-0']);
  });

  it('a retry after a crash appends nothing twice: what is there is taken as appended, the rest follows', async () => {
    const stream = 'retry-stream';
    const writer = await openStreamWriter(redis.url, stream);
    await writer.append('default', [change(1), change(2), change(3)], idOf);
    // The process died before noting that 1 to 3 were delivered: it sends them again, with 4.
    expect(await writer.append('default', [change(1), change(2), change(3), change(4)], idOf)).toBe(4);
    await writer.close();
    expect((await entries(stream)).map((e) => e.id)).toEqual(['1-0', '2-0', '3-0', '4-0']);
  });

  it('an entry gone from a stream it wrote to its top (erased, trimmed) is not put back: sent again, it counts as there', async () => {
    const stream = 'replayed-stream';
    const writer = await openStreamWriter(redis.url, stream);
    await writer.append('default', [change(1), change(2), change(3)], idOf);
    await reader.xDel(stream, '2-0');
    expect(await writer.append('default', [change(1), change(2), change(3)], idOf)).toBe(3);
    await writer.close();
    expect((await entries(stream)).map((e) => e.id)).toEqual(['1-0', '3-0']);
  });

  it('a server that is gone fails the append, and the writer carries on once it is back', async () => {
    const other = await startRedis();
    const writer = await openStreamWriter(other.url, 'gone', { timeoutMs: 500 });
    await writer.append('default', [change(1)], idOf);
    await other.stop();
    await expect(writer.append('default', [change(2)], idOf)).rejects.toThrow();
    await writer.close();
  });

  it('trims by id: entries below the oldest kept change go, approximately (whole nodes)', async () => {
    const stream = 'trimmed';
    const writer = await openStreamWriter(redis.url, stream);
    await writer.append(
      'default',
      Array.from({ length: 300 }, (_, i) => change(i + 1)),
      idOf,
    );
    await writer.trim(250);
    await writer.close();
    const ids = (await entries(stream)).map((e) => Number(e.id.split('-')[0]));
    // Some went, none at or above 250.
    expect(ids[0]).toBeGreaterThan(1);
    expect(ids.filter((seq) => seq >= 250)).toEqual(Array.from({ length: 51 }, (_, i) => 250 + i));
  });
});
