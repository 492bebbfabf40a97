#!/usr/bin/env node
// Fallback for the replay benchmark when the CLI has no `replay` command: replays files into a
// database with `replay()` from the built package, and prints the summary as JSON.
//
//   node build/bench/replay-child.js <file.ndjson> --db <new.db>
import { parseArgs } from 'node:util';
import { distModule } from './lib/paths.js';

// The run's frozen copy of dist/ (see lib/snapshot.ts), or the repository's when run by hand.
const { replay } = await distModule();

const { values, positionals } = parseArgs({ allowPositionals: true, options: { db: { type: 'string' } } });
if (!values.db || positionals.length === 0) {
  console.error('usage: node build/bench/replay-child.js <file.ndjson>... --db <path>');
  process.exit(2);
}
const started = performance.now();
const summary = await replay(positionals, { database: values.db });
process.stdout.write(`${JSON.stringify({ ...summary, elapsedMs: Math.round(performance.now() - started) }, null, 2)}\n`);
