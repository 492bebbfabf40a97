import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createDispatcher } from '../../src/dispatch/dispatcher.js';
import { createHandlerRegistry } from '../../src/dispatch/handlers.js';
import { eventIdentity, parseEvent, parseInstant, type WebhookEvent } from '../../src/events/index.js';
import { foldAnyOrder, foldInOrder, type ProjectableEvent } from '../../src/project/fold.js';
import { prepareProjection } from '../../src/project/write.js';
import { replay } from '../../src/replay/index.js';
import { configureDatabase } from '../../src/store/sqlite/database.js';
import { createGroupCommit } from '../../src/store/group-commit.js';
import { prepareInbox } from '../../src/store/inbox.js';
import { atOffset, BASE, eventArbitrary, streamArbitrary } from '../support/arbitraries.js';
import { readTables, stateTables } from '../support/tables.js';

function projectable(event: WebhookEvent): ProjectableEvent {
  const reading = parseEvent(event);
  if (!reading.ok) throw new Error(`generator made an invalid event: ${JSON.stringify(reading.issues)}`);
  return { event: reading.event, instant: reading.instant, identity: eventIdentity(event) };
}

const reference = (events: WebhookEvent[]) => stateTables(foldInOrder(events.map(projectable)));
const memoryDb = () => configureDatabase(new Database(':memory:'));
const quiet = { warn: () => {}, error: () => {} };

// Re-serialise a delivery with other key order and spacing: the same event, other bytes.
const reserialised = (event: WebhookEvent, spaced: boolean) =>
  JSON.stringify({ data: event.data, timestamp: event.timestamp, event: event.event }, null, spaced ? 2 : undefined);

describe('the projection is a pure function of the set of distinct events', () => {
  it('in memory: any order, any repetition, gives the in-order state', () => {
    fc.assert(
      fc.property(streamArbitrary(60), ({ events, delivered }) => {
        expect(stateTables(foldAnyOrder(delivered.map(projectable)))).toEqual(reference(events));
      }),
      { numRuns: 500 },
    );
  });

  it('in SQLite: a permutation with duplicates (in other bytes) replayed gives the in-order state', async () => {
    await fc.assert(
      fc.asyncProperty(streamArbitrary(40), fc.integer({ min: 1, max: 7 }), async ({ events, delivered }, batchSize) => {
        const db = memoryDb();
        const bodies = delivered.map((e, i) => (i % 3 === 0 ? reserialised(e, i % 2 === 0) : e));
        const summary = await replay(
          bodies.map((b) => (typeof b === 'string' ? JSON.parse(b) : b)),
          { database: db, batchSize },
        );
        const distinct = new Set(events.map((e) => eventIdentity(e))).size;
        expect(summary.projected).toBe(distinct);
        expect(summary.duplicates).toBe(delivered.length - distinct);
        expect(readTables(db)).toEqual(reference(events));
        db.close();
      }),
      { numRuns: 150 },
    );
  });

  it('incremental application equals a from-scratch rebuild after every step', () => {
    fc.assert(
      fc.property(streamArbitrary(25), ({ delivered }) => {
        const db = memoryDb();
        const projection = prepareProjection(db);
        const seen: WebhookEvent[] = [];
        for (const event of delivered) {
          projection.apply(projectable(event));
          seen.push(event);
          expect(readTables(db)).toEqual(reference(seen));
        }
        db.close();
      }),
      { numRuns: 100 },
    );
  });

  it('events of one instant give the same state in any order', () => {
    fc.assert(
      fc.property(streamArbitrary(30, [BASE]), ({ events, delivered }) => {
        expect(stateTables(foldAnyOrder(delivered.map(projectable)))).toEqual(reference(events));
        const db = memoryDb();
        const projection = prepareProjection(db);
        for (const event of delivered) projection.apply(projectable(event));
        expect(readTables(db)).toEqual(reference(events));
        db.close();
      }),
      { numRuns: 200 },
    );
  });

  it('any split into stored batches, with the in-memory queue dropped between them, recovers to the same state', async () => {
    await fc.assert(
      fc.asyncProperty(
        streamArbitrary(30),
        fc.array(fc.integer({ min: 1, max: 10 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
        async ({ events, delivered }, cuts, processBeforeCrash) => {
          const db = memoryDb();
          const inbox = prepareInbox(db);
          const projection = prepareProjection(db);
          const newDispatcher = () => createDispatcher({ db, inbox, projection, handlers: createHandlerRegistry(), logger: quiet }, { batchSize: 3 });
          let offset = 0;
          for (const [i, cut] of cuts.entries()) {
            // One "process lifetime": store a batch (group commit), maybe process it, then vanish.
            const writer = createGroupCommit(db, inbox);
            const batch = delivered.slice(offset, offset + cut);
            offset += cut;
            await Promise.all(
              batch.map((event) => {
                const raw = Buffer.from(JSON.stringify(event));
                return writer.append({ raw, receivedAt: '2026-11-22T00:00:00.000Z', identity: eventIdentity(event), kind: event.event, verdict: 'accepted', secretId: null, reasons: null });
              }),
            );
            if (processBeforeCrash[i]) await newDispatcher().drain();
          }
          const rest = delivered.slice(offset);
          const writer = createGroupCommit(db, inbox);
          await Promise.all(rest.map((event) => writer.append({ raw: Buffer.from(JSON.stringify(event)), receivedAt: '2026-11-22T00:00:00.000Z', identity: eventIdentity(event), kind: event.event, verdict: 'accepted', secretId: null, reasons: null })));
          const recovered = newDispatcher();
          recovered.start();
          await recovered.drain();
          expect(inbox.counts().pending).toBe(0);
          expect(readTables(db)).toEqual(reference(events));
          db.close();
        },
      ),
      { numRuns: 100 },
    );
  });

  it('two timestamps of one instant in different offsets are one instant', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2099, 11, 31) }),
        fc.integer({ min: -14 * 60, max: 14 * 60 }),
        (instant, offset) => {
          expect(parseInstant(atOffset(instant, offset))).toBe(instant);
          expect(parseInstant(atOffset(instant, offset))).toBe(parseInstant(atOffset(instant, 0)));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('the generator covers every kind', () => {
    const kinds = new Set(fc.sample(eventArbitrary(), 500).map((e) => e.event));
    expect(kinds.size).toBe(10);
  });
});
