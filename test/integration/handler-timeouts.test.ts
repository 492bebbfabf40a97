// Handlers that never settle: they must not stall the others, must end as dead letters, must show
// in readiness while stuck, and must not keep close() from resolving in time.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging.js';
import { startStandalone, type Standalone } from '../../src/standalone/start-standalone.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'whsec_timeouts_2c9d';
const CLOSE_APP = fileURLToPath(new URL('../support/close-app.mjs', import.meta.url));

describe('handlers that never settle', () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('time out as failed attempts, free their slots for other candidates, become dead letters, and show in readiness until they settle', async () => {
    const tmp = tempDir();
    const standalone: Standalone = await startStandalone({
      database: tmp.dbPath,
      secrets: [SECRET],
      logger: createLogger({ level: 'silent' }),
      port: 0,
      host: '127.0.0.1',
      dispatch: { handlerTimeoutMs: 150, handlerAttempts: 2, handlerRetryDelayMs: 10, handlerConcurrency: 8 },
    });
    cleanups.push(tmp.cleanup, () => standalone.close(2000));
    const { receiver } = standalone;
    const releases: Array<() => void> = [];
    const aborted: string[] = [];
    const healthy: string[] = [];
    receiver.on('candidate.added', (event, { signal }) => {
      if (event.data.candidate_id === 'healthy') {
        healthy.push(event.data.candidate_id);
        return undefined;
      }
      signal.addEventListener('abort', () => aborted.push(event.data.candidate_id));
      return new Promise<void>((resolve) => releases.push(resolve)); // ignores its signal
    });
    const send = (candidate: string) => {
      const request = signedRequest(sampleEvent('candidate.added', { data: { candidate_id: candidate } }), { secret: SECRET });
      return fetch(`${standalone.url}/webhooks`, { method: 'POST', headers: request.headers, body: request.body });
    };
    for (let i = 0; i < 8; i++) expect((await send(`stuck-${i}`)).status).toBe(200);
    expect((await send('healthy')).status).toBe(200);

    await receiver.drain(); // resolves: every stuck call was abandoned, retried once, then given up
    expect(healthy).toEqual(['healthy']);
    const letters = (await receiver.deadLetters.list()).filter((d) => d.type === 'handler');
    expect(letters).toHaveLength(8);
    for (const letter of letters) expect(letter).toMatchObject({ attempts: 2, error: expect.stringContaining('HandlerTimeoutError') });
    expect(aborted).toHaveLength(16); // each attempt's signal was aborted at its timeout

    // 16 abandoned calls still running: at least as many as may run at once, so not ready.
    expect(receiver.stuckHandlerCalls()).toBe(16);
    const notReady = await fetch(`${standalone.url}/readyz`);
    expect(notReady.status).toBe(503);
    // The reason, and nothing of the inbox: the probe carries no token.
    expect(await notReady.json()).toEqual({
      status: 'not_ready',
      reason: expect.stringMatching(/16 handler calls stuck past their timeout/) as string,
    });

    for (const release of releases) release();
    await waitFor(() => receiver.stuckHandlerCalls() === 0, 5000, 'the released calls to be counted stuck no more');
    expect((await fetch(`${standalone.url}/readyz`)).status).toBe(200);
  });

  it('let close(timeoutMs) resolve within its timeout, keeping the process alive until it does', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [CLOSE_APP, '1000'], { timeout: 10_000 });
    const match = /closed after (\d+) ms/.exec(stdout);
    expect(match, `the process exited before close() resolved: ${JSON.stringify(stdout)}`).not.toBeNull();
    expect(Number(match![1])).toBeLessThan(1500);
  });
});
