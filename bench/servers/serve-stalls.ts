// The standalone receiver (what `prequal-hooks serve` runs) with an event-loop delay monitor: on
// SIGTERM it writes the longest stall it saw, so that the lock benchmark can report it.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { distModule, distUrl } from '../lib/paths.js';
import { announce, serverArgs } from './common.js';

// Not public: what `prequal-hooks serve` runs, from the dist under test.
const { startStandalone } = (await import(
  distUrl('standalone/start-standalone.js')
)) as typeof import('../../dist/standalone/start-standalone.js');
const { createLogger } = await distModule();

const { port, host, db, secret } = serverArgs();
if (!db) throw new Error('--db is required');
const loop = monitorEventLoopDelay({ resolution: 5 });
loop.enable();
const standalone = await startStandalone({ database: db, secrets: [secret], logger: createLogger({ level: 'silent' }), port, host });
announce(standalone.server);
process.once('SIGTERM', () => {
  loop.disable();
  process.stdout.write(`${JSON.stringify({ stalls: { maxMs: loop.max / 1e6, p99Ms: loop.percentile(99) / 1e6 } })}\n`);
  standalone.close(5000).then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${String(error)}\n`);
      process.exit(1);
    },
  );
});
