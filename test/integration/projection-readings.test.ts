// A body this process received is parsed once: the projection takes the intake's reading of the
// row it stored. A row with no reading kept (stored by another process, found after a restart,
// evicted, or holding other bytes since) is read from its bytes, and projects the same.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createHandlerRegistry } from '../../src/dispatch/handlers.js';
import { createKeptReadings } from '../../src/dispatch/kept-readings.js';
import { createProjectionLoop } from '../../src/dispatch/projection-loop.js';
import { readEnvelope, type EnvelopeReading } from '../../src/events/index.js';
import { createReceiver, type Receiver } from '../../src/index.js';
import { DEFAULT_ACCOUNT } from '../../src/receive/account.js';
import { deliveryOf } from '../../src/receive/delivery.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/index.js';
import { readStoreTables } from '../support/tables.js';

// Every JSON text the receiver reads goes through parseJson, every envelope it validates through parseEvent: counted here.
const parses = vi.hoisted(() => ({ count: 0, validations: 0 }));
vi.mock('../../src/events/json.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/events/json.js')>();
  return {
    ...actual,
    parseJson: (text: string) => {
      parses.count++;
      return actual.parseJson(text);
    },
  };
});
vi.mock('../../src/events/parse.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/events/parse.js')>();
  return {
    ...actual,
    parseEvent: (envelope: Parameters<typeof actual.parseEvent>[0]) => {
      parses.validations++;
      return actual.parseEvent(envelope);
    },
  };
});

const added = (candidate: string, first_name = 'Jeanne') =>
  sampleEvent('candidate.added', { data: { candidate_id: candidate, campaign_id: 'cmp_r', first_name } });
const completed = (candidate: string) =>
  sampleEvent('candidate.interview.completed', { data: { candidate_id: candidate, campaign_id: 'cmp_r' } });

/** Events of every outcome: projected, unknown kind, invalid data; and a body that is not JSON. */
const EVENTS: unknown[] = [
  added('c-1'),
  added('c-2'),
  completed('c-1'),
  { event: 'candidate.teleported', timestamp: '2026-11-20T10:00:00Z', data: {} },
  sampleEvent('candidate.interview.completed', { data: { candidate_id: 'c-2', interview_score: 'ten' } }),
  added('c-3'),
];
const NOT_JSON = '{"event":"candidate.added",';
const bodies = () => [...EVENTS.map((e) => JSON.stringify(e)), NOT_JSON].map((text) => Buffer.from(text));

describe('a body parsed once', () => {
  let dir = '';
  let receiver: Receiver | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'readings-'));
    parses.count = 0;
    parses.validations = 0;
  });
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it("the receiver's projection takes the intake's reading: one parse per event, and the state of rows read from their bytes", async () => {
    const received = join(dir, 'received.db');
    receiver = createReceiver({ database: received, allowUnsigned: true });
    for (const rawBody of bodies()) await receiver.receive({ rawBody, headers: { 'content-type': 'application/json' } });
    await receiver.drain();
    // One parse per body, at intake: none at projection (the body that is not JSON is set aside at intake).
    expect(parses.count).toBe(bodies().length);
    await receiver.close();

    // The same bodies stored by another process, projected by a receiver started afterwards: read from their bytes.
    const elsewhere = join(dir, 'elsewhere.db');
    const other = await openStore(elsewhere);
    await other.write(async (tx) => {
      await tx.append(bodies().map((raw) => deliveryOf(DEFAULT_ACCOUNT, raw, readEnvelope(raw), '2026-11-22T00:00:00.000Z', null)));
    });
    await other.close();
    parses.count = 0;
    receiver = createReceiver({ database: elsewhere, allowUnsigned: true });
    await receiver.drain();
    expect(parses.count).toBe(EVENTS.length); // each pending row, once
    expect(await readStoreTables(elsewhere)).toEqual(await readStoreTables(received));
    expect(await receiver.counts()).toMatchObject({ projected: 4, unknown: 1, dead: 2 });
  });

  it('the handler pump takes the event as projected: each event parsed and validated once, and handlers get what they got', async () => {
    receiver = createReceiver({ database: join(dir, 'handlers.db'), allowUnsigned: true });
    const seen: unknown[] = [];
    receiver.onAny((event, { inboxId }) => void seen.push([inboxId, event]));
    for (const rawBody of bodies()) await receiver.receive({ rawBody, headers: { 'content-type': 'application/json' } });
    await receiver.drain();
    expect(parses.count).toBe(bodies().length);
    expect(parses.validations).toBe(EVENTS.length);
    // The events of the bodies as sent, in inbox order (one key's handlers run in order).
    const projected = [1, 2, 3, 6].map((inboxId) => [inboxId, EVENTS[inboxId - 1]]);
    expect([...seen].sort((a, b) => (a as [number])[0] - (b as [number])[0])).toEqual(projected);
  });
});

describe('the projection loop with kept readings', () => {
  const opened: Array<{ store: Store; db: Database.Database }> = [];
  afterEach(async () => {
    for (const { store, db } of opened.splice(0)) {
      await store.close();
      db.close();
    }
  });

  /** The bodies stored in a new in-memory database, with their inbox ids. */
  async function stored(raws: Buffer[]) {
    const db = new Database(':memory:');
    const store = await openStore(db);
    opened.push({ store, db });
    const appended = await store.write(
      async (tx) =>
        await tx.append(raws.map((raw) => deliveryOf(DEFAULT_ACCOUNT, raw, readEnvelope(raw), '2026-11-22T00:00:00.000Z', null))),
    );
    return { store, db, ids: appended.map((a) => a.inboxId!) };
  }

  async function project(store: Store, readings?: ReturnType<typeof createKeptReadings<EnvelopeReading>>) {
    const taken: boolean[] = [];
    const loop = createProjectionLoop(
      {
        store: { forAccount: (account) => store.forAccount(account), accountsWithWork: () => store.accountsWithWork() },
        handlers: createHandlerRegistry(),
        logger: { warn: () => undefined },
        now: () => Date.parse('2026-11-22T01:00:00.000Z'),
        stopping: new AbortController().signal,
        handlersDue: () => undefined,
        ...(readings !== undefined && {
          readings: {
            take: (row) => {
              const reading = readings.take(row);
              taken.push(reading !== undefined);
              return reading;
            },
          },
        }),
      },
      { batchSize: 3 },
    );
    loop.notify();
    await loop.onIdle();
    return taken;
  }

  it('reads a row from its bytes when its reading was evicted, or was read from other bytes (a redacted row), and projects the same', async () => {
    const raws = EVENTS.map((e) => Buffer.from(JSON.stringify(e)));
    const plain = await stored(raws);
    await project(plain.store);

    const cached = await stored(raws);
    // Room for three: the first rows' readings are evicted.
    const readings = createKeptReadings<EnvelopeReading>({ maxEntries: 3, maxBytes: 1 << 20 });
    raws.forEach((raw, i) => {
      const reading = readEnvelope(raw);
      if (reading.ok) readings.keep(cached.ids[i]!, raw, reading.identity, reading);
    });
    // The last row's reading is of other bytes with its identity (as a redacted row's would be): never used.
    const last = raws.length - 1;
    const other = Buffer.from(JSON.stringify(added('c-3', 'Someone else')));
    const [lastReading, otherReading] = [readEnvelope(raws[last]!), readEnvelope(other)];
    if (!lastReading.ok || !otherReading.ok) throw new Error('valid envelopes');
    readings.keep(cached.ids[last]!, other, lastReading.identity, { ...otherReading, identity: lastReading.identity });
    parses.count = 0;
    expect(await project(cached.store, readings)).toEqual([false, false, false, true, true, false]);
    expect(parses.count).toBe(4); // three evicted, one of other bytes
    expect(await readStoreTables(cached.db)).toEqual(await readStoreTables(plain.db));
    expect((await readStoreTables(cached.db)).candidates.find((c) => c.candidate_id === 'c-3')?.first_name).toBe('Jeanne');
    expect(readings.size()).toEqual({ entries: 0, bytes: 0 });
  });
});
