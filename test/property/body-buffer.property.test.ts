// A body read in any chunks, announced or not, small or large (a plain buffer, then a resizable
// one): the bytes kept are the bytes sent, the budget holds exactly what the claim says, and a
// body past the limit or the room left is refused without taking more.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createBodyBuffer } from '../../src/receive/body-buffer.js';
import { createBodyBudget } from '../../src/receive/budget.js';

const LIMIT = 200_000;

const chunked = fc
  .array(fc.integer({ min: 0, max: 70_000 }), { minLength: 0, maxLength: 12 })
  .map((sizes) => sizes.map((size, i) => Buffer.alloc(size, i + 1)));

describe('a body buffer', () => {
  it('keeps exactly the bytes sent, in any chunks, and claims them (as they arrive, whatever was announced)', () => {
    fc.assert(
      fc.property(chunked, fc.boolean(), (chunks, announced) => {
        const sent = Buffer.concat(chunks);
        fc.pre(sent.length <= LIMIT);
        const budget = createBodyBudget(4 * LIMIT);
        const claim = budget.claim();
        const body = createBodyBuffer(LIMIT, claim, announced ? sent.length : undefined);
        for (const chunk of chunks) expect(body.add(chunk)).toBe('ok');
        expect(budget.held()).toBe(sent.length);
        const kept = body.bytes();
        body.discard();
        // A copy, or the plain buffer itself: it outlives the buffer's storage either way.
        expect(kept.equals(sent)).toBe(true);
        claim.release();
        expect(budget.held()).toBe(0);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a body past the limit, and one that grows past the room left, taking nothing more', () => {
    fc.assert(
      fc.property(chunked, fc.integer({ min: 0, max: LIMIT }), (chunks, room) => {
        const budget = createBodyBudget(LIMIT);
        const other = budget.claim();
        other.take(LIMIT - room);
        // A body complete and being answered: never cut off to make room.
        other.complete();
        const claim = budget.claim();
        const body = createBodyBuffer(LIMIT, claim, undefined);
        let size = 0;
        for (const chunk of chunks) {
          const added = body.add(chunk);
          if (size + chunk.length > room) {
            expect(added).toBe(size + chunk.length > LIMIT ? 'too_large' : 'busy');
            break;
          }
          expect(added).toBe('ok');
          size += chunk.length;
        }
        expect(budget.held()).toBe(LIMIT - room + size);
        body.discard();
        claim.release();
        expect(budget.held()).toBe(LIMIT - room);
      }),
      { numRuns: 200 },
    );
    const budget = createBodyBudget(4 * LIMIT);
    const body = createBodyBuffer(LIMIT, budget.claim(), undefined);
    expect(body.add(Buffer.alloc(LIMIT))).toBe('ok');
    expect(body.add(Buffer.alloc(1))).toBe('too_large');
    expect(budget.held()).toBe(LIMIT);
  });

  it('claims nothing for an announced length: a body announcing more than the budget holds only what came', () => {
    const budget = createBodyBudget(1000);
    const claim = budget.claim();
    const body = createBodyBuffer(LIMIT, claim, 100_000);
    expect(budget.held()).toBe(0);
    expect(body.add(Buffer.alloc(10))).toBe('ok');
    expect(budget.held()).toBe(10);
    // Another body takes the rest of the room; this one, growing past it, is refused then.
    const other = budget.claim();
    other.complete();
    expect(other.take(990)).toBe(true);
    expect(body.add(Buffer.alloc(1))).toBe('busy');
    expect(budget.held()).toBe(1000);
  });

  it("hands a large body's storage back: what was kept is a copy that stays whole", () => {
    const budget = createBodyBudget(4 * LIMIT);
    const body = createBodyBuffer(LIMIT, budget.claim(), 150_000);
    const sent = Buffer.alloc(150_000, 7);
    body.add(sent.subarray(0, 100_000));
    body.add(sent.subarray(100_000));
    const kept = body.bytes();
    body.discard();
    expect(kept.buffer.byteLength).toBe(kept.length); // its own allocation, not a view of the handed-back one
    expect(kept.equals(sent)).toBe(true);
  });
});
