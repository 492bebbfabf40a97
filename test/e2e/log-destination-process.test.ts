// The log destination in a process of its own, as `prequal-hooks serve` runs it (the built
// dist/logging.js): what it holds is written when the process dies, and a reader that stops
// reading never blocks the event loop.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.js';

describe('logDestination in its own process', () => {
  it('writes what it holds when the process dies of an uncaught exception', () => {
    const logging = pathToFileURL(join(process.cwd(), 'dist', 'logging.js')).href;
    const script = `const { createLogger, logDestination } = await import(${JSON.stringify(logging)});
      const logger = createLogger({ level: 'info' }, logDestination(1));
      logger.info('held');
      setImmediate(() => { throw new Error('crash'); });`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(run.status).not.toBe(0);
    expect(run.stdout.split('\n').filter((line) => line.includes('"msg":"held"'))).toHaveLength(1);
  });

  it('never blocks the event loop when the reader stops reading: it holds up to 16 MiB, drops the rest and says how many', async () => {
    const logging = pathToFileURL(join(process.cwd(), 'dist', 'logging.js')).href;
    // 40,000 lines of ~1 KB (40 MB) into a pipe nobody reads yet: each burst of writes must return at once.
    const script = `const { createLogger, logDestination } = await import(${JSON.stringify(logging)});
      const destination = logDestination(1);
      const logger = createLogger({ level: 'info' }, destination);
      const pad = 'x'.repeat(1000);
      let slowest = 0;
      for (let burst = 0; burst < 40; burst++) {
        const started = performance.now();
        for (let i = 0; i < 1000; i++) logger.info({ burst, i, pad }, 'line');
        slowest = Math.max(slowest, performance.now() - started);
        await new Promise((resolve) => setImmediate(resolve));
      }
      process.stderr.write(JSON.stringify({ slowest, dropped: destination.dropped }) + String.fromCharCode(10));
      await new Promise((resolve) => destination.flush(() => resolve()));`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pause();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await waitFor(() => stderr.includes('slowest'), 20_000, 'the child to report its slowest burst');
    const report = JSON.parse(stderr.split('\n').find((line) => line.includes('slowest')) ?? stderr) as {
      slowest: number;
      dropped: number;
    };
    expect(report.dropped).toBeGreaterThan(10_000);
    // A burst of a thousand lines is formatting, not waiting for the reader (a blocked write would take until the end).
    expect(report.slowest).toBeLessThan(2000);
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stdout.resume();
    const [code] = (await once(child, 'close')) as [number];
    expect(code).toBe(0);
    const lines = stdout.split('\n').filter((line) => line !== '');
    for (const line of lines) JSON.parse(line);
    expect(lines.length).toBeGreaterThan(10_000);
    expect(lines.at(-1)).toMatch(/"level":40,.*"msg":"\d+ log lines dropped: the log's reader did not keep up"/);
  }, 60_000);
});
