// The gate of PostgreSQL's long operator reads (src/store/postgres/operator-reads.ts): at most
// `limit` run at once, the others wait their turn in order and give up as BUSY after `waitMs`;
// the reads an index bounds pass by.
import { describe, expect, it } from 'vitest';
import { READ_LENGTHS, type OperatorReads } from '../../src/store/long-reads.js';
import { gatedReads, readGate } from '../../src/store/postgres/operator-reads.js';
import { StoreUnavailableError } from '../../src/store/errors.js';
import { waitFor } from '../support/wait-for.js';

/** Operator reads whose every method records its call and answers when `release(name)` is called. */
function heldReads() {
  const started: string[] = [];
  const releases = new Map<string, () => void>();
  const port = (name: keyof typeof READ_LENGTHS) =>
    Object.fromEntries(
      Object.keys(READ_LENGTHS[name]).map((method) => [
        method,
        (label: string) => {
          started.push(label);
          return new Promise((resolve) => releases.set(label, () => resolve(label)));
        },
      ]),
    );
  const own = { readModel: port('readModel'), people: port('people') } as unknown as OperatorReads;
  const release = (label: string) => releases.get(label)!();
  return { own, started, release };
}

/** Until `n` reads have started, whichever they are (the test then says which). */
const untilStarted = (started: string[], n: number) => waitFor(() => started.length >= n, 2000, `${n} reads started`);

describe('the long operator reads gate', () => {
  it('runs `limit` long reads at once, the others in order as places free, and bounded reads at once', async () => {
    const { own, started, release } = heldReads();
    const reads = gatedReads(readGate(2, 10_000), own) as unknown as {
      readModel: Record<string, (label: string) => Promise<string>>;
      people: Record<string, (label: string) => Promise<string>>;
    };
    const first = reads.readModel.listEvents!('first');
    const second = reads.people.responses!('second');
    const third = reads.readModel.countEvents!('third');
    const fourth = reads.readModel.campaigns!('fourth');
    const byId = reads.readModel.event!('by id');
    const age = reads.readModel.oldestPending!('age');
    await untilStarted(started, 4);
    expect([...started].sort()).toEqual(['age', 'by id', 'first', 'second']);
    release('second');
    await untilStarted(started, 5);
    expect(started.at(-1)).toBe('third');
    release('first');
    await untilStarted(started, 6);
    expect(started.at(-1)).toBe('fourth');
    for (const label of ['third', 'fourth', 'by id', 'age']) release(label);
    expect(await Promise.all([first, second, third, fourth, byId, age])).toEqual(['first', 'second', 'third', 'fourth', 'by id', 'age']);
  });

  it('a long read that waits longer than waitMs gives up as BUSY, and its place is not lost', async () => {
    const { own, started, release } = heldReads();
    const reads = gatedReads(readGate(1, 30), own) as unknown as { readModel: Record<string, (label: string) => Promise<string>> };
    const running = reads.readModel.listEvents!('running');
    const refused = reads.readModel.listEvents!('refused').catch((error: unknown) => error);
    const error = await refused;
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).code).toBe('BUSY');
    release('running');
    await running;
    const next = reads.readModel.kinds!('next');
    await untilStarted(started, 2);
    expect(started).toEqual(['running', 'next']);
    release('next');
    expect(await next).toBe('next');
  });
});
