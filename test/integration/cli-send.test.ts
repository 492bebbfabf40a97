// `prequal-hooks send` failing, in this process: nothing listening, no answer within --timeout, and
// its usage errors. Sending to a real receiver: test/e2e/cli-send.test.ts.
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EVENT_KINDS } from '../../src/events/index.js';
import { runCli } from '../support/command-io.js';
import { tempDir } from '../support/servers.js';

const SECRET = 'whsec_send_e2e_4d2a71';
// A usage error is found before anything is sent: the URL is never reached.
const UNUSED_URL = 'http://127.0.0.1:9/webhooks';

describe.concurrent('prequal-hooks send, failing', () => {
  const tmp = tempDir('prequal-hooks-send-');
  afterAll(() => tmp.cleanup());

  it('exits 1 with a clear message when nothing listens at the URL', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const result = await runCli(['send', 'campaign.created', '--url', `http://127.0.0.1:${closedPort}/webhooks`, '--secret', SECRET]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/could not reach http:\/\/127\.0\.0\.1:\d+\/webhooks: .*ECONNREFUSED/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('exits 1 with "no answer" when the receiver does not answer in --timeout, or stops halfway through its answer', async () => {
    const sockets: Socket[] = [];
    // One listener that never answers, one that sends the head of an answer and then nothing.
    const silent = createServer((socket) => void sockets.push(socket));
    const halfway = createServer((socket) => {
      sockets.push(socket);
      socket.once('data', () => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{"rec'));
    });
    const portOf = (server: ReturnType<typeof createServer>) =>
      new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
    const [silentPort, halfwayPort] = await Promise.all([portOf(silent), portOf(halfway)]);
    try {
      const results = await Promise.all(
        [silentPort, halfwayPort].map((port) =>
          runCli(['send', 'campaign.created', '--url', `http://127.0.0.1:${port}/webhooks`, '--secret', SECRET, '--timeout', '500']),
        ),
      );
      for (const result of results) {
        expect(result.code).toBe(1);
        expect(result.stdout).toBe('');
        expect(result.stderr).toMatch(/no answer from http:\/\/127\.0\.0\.1:\d+\/webhooks within 500 ms/);
      }
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
      halfway.close();
    }
  });

  it('is a usage error (exit 2) for an unknown kind, listing the ten kinds, and for missing or conflicting arguments', async () => {
    const file = join(tmp.dir, 'x.json');
    const results = await Promise.all([
      runCli(['send', 'candidate.hired', '--url', UNUSED_URL]),
      runCli(['send', 'candidate.added']),
      runCli(['send', '--url', UNUSED_URL]),
      runCli(['send', 'candidate.added', '--file', file, '--url', UNUSED_URL]),
      runCli(['send', 'candidate.added', '--url', UNUSED_URL, '--set', 'interview_score']),
      runCli(['send', 'candidate.added', '--url', 'localhost:8787']),
    ]);
    for (const result of results) {
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    }
    for (const kind of EVENT_KINDS) expect(results[0].stderr).toContain(kind);
    expect(results[1].stderr).toContain('--url');
  });
});
