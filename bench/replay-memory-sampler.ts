// Preloaded (`node --import`) into the replay that bench/replay-memory.ts measures: every 100 ms
// the event loop is free, one line on stderr with V8's heap and the memory outside it. The last
// steps of a bulk load never yield, so the bench reads V8's heap there from --trace-gc instead.
//
// With BENCH_DEFAULT_NURSERY=1, v8.setFlagsFromString does nothing in this process: the CLI's
// smallNursery() is then a no-op, and the replay runs with the nursery V8 sizes by default.
import { writeSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';

if (process.env.BENCH_DEFAULT_NURSERY === '1') {
  const v8 = createRequire(import.meta.url)('node:v8') as { setFlagsFromString: (flags: string) => void };
  v8.setFlagsFromString = () => undefined;
  syncBuiltinESMExports();
}

setInterval(() => {
  const { heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
  writeSync(2, `memory ${JSON.stringify({ ms: Math.round(performance.now()), heapTotal, heapUsed, external, arrayBuffers })}\n`);
}, 100).unref();
