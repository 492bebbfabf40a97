#!/usr/bin/env node
// Fallback for the replay benchmark when the CLI has no `replay` command: replays files into a
// database with `replay()` from the built package, and prints the summary as JSON.
//
//   node bench/replay-child.js <file.ndjson> --db <new.db>
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

// The run's frozen copy of dist/ (see lib/snapshot.js), or ../dist when run by hand.
const { replay } = await import(process.env.BENCH_DIST ? pathToFileURL(`${process.env.BENCH_DIST}/index.js`).href : '../dist/index.js');

const { values, positionals } = parseArgs({ allowPositionals: true, options: { db: { type: 'string' } } });
if (!values.db || positionals.length === 0) {
  console.error('usage: node bench/replay-child.js <file.ndjson>... --db <path>');
  process.exit(2);
}
const started = performance.now();
const summary = await replay(positionals, { database: values.db });
process.stdout.write(`${JSON.stringify({ ...summary, elapsedMs: Math.round(performance.now() - started) }, null, 2)}\n`);
