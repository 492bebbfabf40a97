#!/usr/bin/env node
// The CPU an event costs in one process, with the projection taking the intake's reading of each
// body ("kept") or reading the stored bytes again ("read"): `npm run bench:parse-once` (then
// `node build/bench/parse-once.js --events 8000 --rounds 8`). In process, no HTTP: the intake, group commit,
// dispatcher and a SQLite file, wired as a receiver wires them; the events are received, then
// projected, each phase measured apart. Rounds alternate (ABBA); the medians are compared, from the
// same run. The events fit in the readings kept (10,000 at most): past them, the oldest are read again.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sign } from 'prequal-hooks';
import type { EnvelopeReading } from '../dist/events/index.js';
import type { KeptReadings } from '../dist/dispatch/kept-readings.js';
import { createEventSpace } from './lib/events.js';
import { median, round } from './lib/stats.js';

const { values: flags } = parseArgs({
  options: {
    events: { type: 'string', default: '8000' },
    rounds: { type: 'string', default: '6' },
    concurrency: { type: 'string', default: '100' },
  },
});
const EVENTS = Number(flags.events);
const ROUNDS = Number(flags.rounds);
const CONCURRENCY = Number(flags.concurrency);
const SECRET = 'bench-secret-parse-once';

const dist = (path: string) => new URL(`../../dist/${path}`, import.meta.url).href;
const { openStore } = (await import(dist('store/open.js'))) as typeof import('../dist/store/open.js');
const { createGroupCommit } = (await import(dist('store/group-commit.js'))) as typeof import('../dist/store/group-commit.js');
const { createDispatcher } = (await import(dist('dispatch/dispatcher.js'))) as typeof import('../dist/dispatch/dispatcher.js');
const { createHandlerRegistry } = (await import(dist('dispatch/handlers.js'))) as typeof import('../dist/dispatch/handlers.js');
const { createKeptReadings } = (await import(dist('dispatch/kept-readings.js'))) as typeof import('../dist/dispatch/kept-readings.js');
const { createIntake } = (await import(dist('receive/intake.js'))) as typeof import('../dist/receive/intake.js');

const space = createEventSpace(4242);
space.extend(EVENTS);
const requests = Array.from({ length: EVENTS }, (_, i) => {
  const body = Buffer.from(JSON.stringify(space.eventAt(i)));
  return { body, signature: sign(SECRET, body) };
});

type Mode = 'kept' | 'read';
const silent = { warn: () => undefined, error: () => undefined };

/** CPU µs per event of a phase. */
interface RoundResult {
  intake: number;
  projection: number;
  hits: number;
}

/**
 * One round on a new database: every event received (intake and group commit), then projected
 * from the backlog, each phase's process CPU per event measured apart: the readings saved are the
 * projection's.
 */
async function runRound(mode: Mode): Promise<RoundResult> {
  const dir = mkdtempSync(join(tmpdir(), 'parse-once-'));
  const store = await openStore(join(dir, 'inbox.db'));
  let hits = 0;
  const kept = createKeptReadings<EnvelopeReading>();
  const readings: Pick<KeptReadings<EnvelopeReading>, 'take'> = {
    take: (row) => {
      const reading = kept.take(row);
      if (reading !== undefined) hits++;
      return reading;
    },
  };
  const groupCommit = createGroupCommit(store);
  const intake = createIntake({
    secrets: [SECRET],
    logger: silent,
    store: (delivery, reading) =>
      groupCommit.append(
        delivery,
        mode === 'kept' && reading?.ok === true ? (id) => kept.keep(id, delivery.raw, reading.identity, reading) : undefined,
      ),
  });
  const intakeStarted = process.cpuUsage();
  let next = 0;
  const sender = async () => {
    while (next < EVENTS) {
      const r = requests[next++]!;
      const result = await intake.receive({ rawBody: r.body, headers: { 'x-service-signature': r.signature } });
      if (result.outcome !== 'stored') throw new Error(`event not stored: ${result.outcome}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, sender));
  const intakeUsed = process.cpuUsage(intakeStarted);
  const dispatcher = createDispatcher({
    store,
    handlers: createHandlerRegistry(),
    logger: silent,
    ...(mode === 'kept' && { readings }),
  });
  const projectionStarted = process.cpuUsage();
  dispatcher.start();
  await dispatcher.drain();
  const projectionUsed = process.cpuUsage(projectionStarted);
  await dispatcher.close();
  await groupCommit.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  const perEvent = (used: NodeJS.CpuUsage) => (used.user + used.system) / EVENTS;
  return { intake: perEvent(intakeUsed), projection: perEvent(projectionUsed), hits };
}

const results: Record<Mode, RoundResult[]> = { kept: [], read: [] };
await runRound('read'); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  const order: Mode[] = r % 2 === 0 ? ['read', 'kept'] : ['kept', 'read'];
  for (const mode of order) {
    const result = await runRound(mode);
    results[mode].push(result);
    console.log(
      `round ${r + 1} ${mode}: intake ${round(result.intake, 1)} µs, projection ${round(result.projection, 1)} µs CPU per event; readings taken ${result.hits}/${EVENTS}`,
    );
  }
}
const medianOf = (mode: Mode, phase: 'intake' | 'projection') => median(results[mode].map((r) => r[phase])) ?? NaN;
for (const phase of ['projection', 'intake'] as const) {
  const read = medianOf('read', phase);
  const kept = medianOf('kept', phase);
  console.log(`median ${phase} CPU per event: read ${round(read, 1)} µs, kept ${round(kept, 1)} µs; kept ÷ read ${round(kept / read, 3)}`);
}
console.log(
  `(${EVENTS} events, ${ROUNDS} rounds, ${Math.round(requests.reduce((n, r) => n + r.body.length, 0) / EVENTS)} bytes a body on average)`,
);
