// The standalone receiver (what `prequal-hooks serve` runs) with an event-loop delay monitor: on
// SIGTERM it writes the longest stall it saw, so that the lock benchmark can report it.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { announce, serverArgs } from './common.js';

const dist = process.env.BENCH_DIST;
const { startStandalone } = await import(dist ? pathToFileURL(`${dist}/server.js`).href : '../../dist/server.js');
const { createLogger } = await import(dist ? pathToFileURL(`${dist}/logging.js`).href : '../../dist/logging.js');

const { port, host, db, secret } = serverArgs();
const loop = monitorEventLoopDelay({ resolution: 5 });
loop.enable();
const standalone = await startStandalone({ database: db, secrets: [secret], logger: createLogger({ level: 'silent' }), port, host });
announce(standalone.server);
process.once('SIGTERM', async () => {
  loop.disable();
  process.stdout.write(`${JSON.stringify({ stalls: { maxMs: loop.max / 1e6, p99Ms: loop.percentile(99) / 1e6 } })}\n`);
  await standalone.close(5000);
  process.exit(0);
});
