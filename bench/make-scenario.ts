#!/usr/bin/env node
// Writes a replay scenario: N lines of NDJSON, a realistic mix of the ten kinds (one campaign per
// 200 candidates; candidates added or sourced, interviews started, completed / extended / failed,
// retries after voicemail, campaign status changes, credits), a share of duplicates (half
// byte-identical, half re-serialised with other key order and spacing), globally shuffled.
//
// Streaming and lean: events are rebuilt from their index (bench/lib/events.ts), so memory holds
// a permutation of line numbers (4 bytes per line) and a write buffer, never the events.
//
//   node build/bench/make-scenario.js --events 1000000 --duplicates 0.2 --seed 20261120 --out bench/tmp/x.ndjson
import { closeSync, openSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createEventSpace, mix, prng, reserialised } from './lib/events.js';
import type { ScenarioMeta } from './lib/types.js';

export const SCENARIO_GENERATOR_VERSION = 1;

export function writeScenario({
  events,
  duplicates,
  seed,
  out,
}: {
  events: number;
  duplicates: number;
  seed: number;
  out: string;
}): ScenarioMeta {
  const started = performance.now();
  const space = createEventSpace(seed);
  const distinct = Math.round(events * (1 - duplicates));
  space.extend(distinct);
  // Lines 0 … distinct-1 are the distinct events; the others repeat an earlier one.
  const order = new Uint32Array(events);
  for (let i = 0; i < events; i++) order[i] = i;
  const r = prng(mix(seed, 0xd1ce));
  for (let i = events - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    const t = order[i]!;
    order[i] = order[j]!;
    order[j] = t;
  }

  const kinds: Record<string, number> = {};
  let bytes = 0;
  let reserialisedCount = 0;
  const partial = `${out}.partial`;
  const fd = openSync(partial, 'w');
  let chunk: string[] = [];
  let chunkChars = 0;
  const flush = () => {
    const text = chunk.join('');
    bytes += writeSync(fd, text);
    chunk = [];
    chunkChars = 0;
  };
  for (let k = 0; k < events; k++) {
    const line = order[k]!;
    let text: string;
    if (line < distinct) {
      const event = space.eventAt(line);
      kinds[event.event] = (kinds[event.event] ?? 0) + 1;
      text = JSON.stringify(event);
    } else {
      const h = mix(seed ^ 0xd0b1e, line);
      const event = space.eventAt(h % distinct);
      if (h & 0x80000000) {
        text = reserialised(event);
        reserialisedCount++;
      } else text = JSON.stringify(event);
    }
    chunk.push(text, '\n');
    chunkChars += text.length + 1;
    if (chunkChars >= 1 << 20) flush();
  }
  if (chunk.length > 0) flush();
  closeSync(fd);
  renameSync(partial, out);
  const meta: ScenarioMeta = {
    generatorVersion: SCENARIO_GENERATOR_VERSION,
    events,
    distinct,
    duplicates: events - distinct,
    duplicatesReserialised: reserialisedCount,
    seed,
    bytes,
    kinds,
    campaigns: kinds['campaign.created'] ?? 0,
    candidates: (kinds['candidate.added'] ?? 0) + (kinds['candidate.sourced'] ?? 0),
    generatedInMs: Math.round(performance.now() - started),
    generatorMaxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  };
  writeFileSync(`${out}.meta.json`, `${JSON.stringify(meta, null, 2)}\n`);
  return meta;
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const { values } = parseArgs({
    options: {
      events: { type: 'string', default: '1000000' },
      duplicates: { type: 'string', default: '0.2' },
      seed: { type: 'string', default: '20261120' },
      out: { type: 'string' },
    },
  });
  if (!values.out) {
    console.error('usage: node build/bench/make-scenario.js --out <file.ndjson> [--events N] [--duplicates 0.2] [--seed S]');
    process.exit(2);
  }
  const meta = writeScenario({
    events: Number(values.events),
    duplicates: Number(values.duplicates),
    seed: Number(values.seed),
    out: values.out,
  });
  process.stdout.write(`${JSON.stringify(meta)}\n`);
}
