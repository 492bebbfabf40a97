// The HTTP edges of the real `prequal-hooks serve`: slow senders, what Node itself refuses, many
// headers, repeated signatures, the moments after SIGTERM, readiness on a full disk, file modes.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { killChildren, runCliProcess, SHUFFLED, startServe, type ServeProcess } from '../support/cli-process.js';
import { warnSkipped } from '../support/needs.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'whsec_edges_7a3e';

/** Writes raw bytes on a new connection and reads everything until the server closes it. */
function raw(url: string, chunks: Array<string | { wait: number }>): Promise<{ text: string; ms: number; error?: string }> {
  const { hostname, port } = new URL(url);
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('close', () => resolve({ text, ms: performance.now() - started }));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ text, ms: performance.now() - started, error: error.code ?? error.message }),
    );
    const send = async () => {
      for (const chunk of chunks) {
        if (typeof chunk === 'string') socket.write(chunk);
        // eslint-disable-next-line no-restricted-syntax -- the sender's pace between its bytes is the scenario
        else await new Promise((r) => setTimeout(r, chunk.wait));
      }
    };
    // Only timers are awaited: nothing rejects.
    socket.on('connect', () => void send());
  });
}

const bodyOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { error: { code: string; message: string } };

describe('prequal-hooks serve at its HTTP edges', () => {
  const tmp = tempDir();
  let serve: ServeProcess;
  afterAll(async () => {
    await serve?.stop().catch(() => undefined);
    killChildren();
    tmp.cleanup();
  });

  it('creates its folder, database, WAL and SHM owner-only', async () => {
    const dir = join(tmp.dir, 'fresh');
    serve = await startServe([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--db',
      join(dir, 'hooks.db'),
      '--secret',
      SECRET,
      '--log-level',
      'info',
    ]);
    const request = signedRequest(sampleEvent('candidate.added'), { secret: SECRET });
    expect((await fetch(serve.webhookUrl, { method: 'POST', headers: request.headers, body: request.body })).status).toBe(200);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const file of ['hooks.db', 'hooks.db-wal', 'hooks.db-shm'])
      expect((statSync(join(dir, file)).mode & 0o777).toString(8), file).toBe('600');
  });

  it("accepts a valid signature sent after 150 other headers, and refuses headers over Node's size limit with 431 in the envelope", async () => {
    const request = signedRequest(sampleEvent('candidate.sourced'), { secret: SECRET });
    const proxyHeaders = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`x-proxy-hop-${i}`, `10.0.0.${i % 250}`]));
    const response = await fetch(serve.webhookUrl, {
      method: 'POST',
      headers: { ...proxyHeaders, ...request.headers },
      body: request.body,
    });
    expect(response.status).toBe(200);

    const huge = await raw(serve.baseUrl, [
      `POST /webhooks HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(20_000)}\r\nContent-Length: 2\r\n\r\n{}`,
    ]);
    expect(huge.text).toMatch(/^HTTP\/1\.1 431 /);
    expect(bodyOf(huge.text).error.code).toBe('HEADERS_TOO_LARGE');
  });

  it('answers what is not HTTP with 400 in the envelope', async () => {
    const garbage = await raw(serve.baseUrl, ['NOT HTTP AT ALL\r\n\r\n']);
    expect(garbage.text).toMatch(/^HTTP\/1\.1 400 /);
    expect(bodyOf(garbage.text).error).toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('logs garbage and a TLS handshake on the plain port at debug as what they are, never as a refused webhook', async () => {
    const debug = await startServe([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--db',
      join(tmp.dir, 'tls.db'),
      '--secret',
      SECRET,
      '--log-level',
      'debug',
    ]);
    try {
      const { port } = new URL(debug.baseUrl);
      const handshake = await new Promise<string>((resolve) => {
        const socket = tlsConnect({ port: Number(port), host: '127.0.0.1', rejectUnauthorized: false });
        socket.once('secureConnect', () => resolve('connected'));
        socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
      });
      expect(handshake).not.toBe('connected');
      await raw(debug.baseUrl, ['NOT HTTP AT ALL\r\n\r\n']);
      await waitFor(
        () => (debug.logLines().filter((l) => l.outcome === 'not_http').length === 2 ? true : undefined),
        5000,
        'two not_http lines',
      );
      const lines = debug.logLines().filter((l) => l.outcome === 'not_http');
      expect(lines.map((l) => [l.level, l.tls ?? false])).toEqual([
        [20, true],
        [20, false],
      ]);
      expect(debug.logLines().filter((l) => l.msg === 'webhook')).toEqual([]);
    } finally {
      await debug.stop();
    }
  });

  it('says a repeated signature header was repeated', async () => {
    const request = signedRequest(sampleEvent('candidate.added'), { secret: SECRET });
    const signature = request.headers['x-service-signature']!;
    const twice = await raw(serve.baseUrl, [
      `POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Service-Signature: ${signature}\r\n` +
        `X-Service-Signature: ${signature}\r\nContent-Length: ${Buffer.byteLength(request.body)}\r\nConnection: close\r\n\r\n${request.body.toString()}`,
    ]);
    expect(twice.text).toMatch(/^HTTP\/1\.1 401 /);
    expect(bodyOf(twice.text).error.message).toMatch(/sent more than once/);
  });

  it('cuts a body that comes slower than 240 bytes a second off once its 5 s of grace have passed (before it sends the rest at 12 s), 408 in the envelope, and counts the 408 in a summary line', async () => {
    const summaries = () => serve.logLines().filter((l) => l.outcome === 'refused' && l.reason === 'REQUEST_TIMEOUT');
    // Node's own limit is 15 s here, and 300 s by default: a server that did not cut it by 12 s would answer the whole body.
    const head = 'POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{"event":';
    const slow = await raw(serve.baseUrl, [head, { wait: 12_000 }, `"late"}${' '.repeat(84)}`]);
    expect(slow.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(bodyOf(slow.text).error).toMatchObject({
      code: 'REQUEST_TIMEOUT',
      message: expect.stringMatching(/slower than 240 bytes a second/),
    });
    expect(slow.ms).toBeGreaterThan(4500); // not before its 5 s (checked every second)
    expect(slow.ms).toBeLessThan(9000);
    // Not an access-log line of its own: a summary line, with the status the client got and its address.
    const summary = await waitFor(() => summaries()[0], 5000, 'the summary line');
    expect(summary).toMatchObject({ status: 408, count: 1, clients: [{ client: '127.0.0.1', count: 1 }] });
    expect(serve.logLines().filter((l) => l.msg === 'webhook' && l.status === 408)).toEqual([]);
  }, 25_000);

  it('answers new connections 503 SHUTTING_DOWN after SIGTERM until the listener closes: never a reset', async () => {
    // What each of 4 senders got, in order: a status, or a connection error ('EOF': closed unanswered).
    const outcomes: string[][] = [[], [], [], []];
    let stop = false;
    let refusedAt = Infinity;
    const request = signedRequest(sampleEvent('credits.low'), { secret: SECRET });
    const wire = `POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Service-Signature: ${request.headers['x-service-signature']}\r\nContent-Length: ${Buffer.byteLength(request.body)}\r\nConnection: close\r\n\r\n${request.body.toString()}`;
    const hammer = async (mine: string[]) => {
      while (!stop) {
        const r = await raw(serve.baseUrl, [wire]);
        mine.push(r.error ?? (r.text === '' ? 'EOF' : r.text.slice(9, 12)));
        if (r.error === 'ECONNREFUSED') {
          refusedAt = Math.min(refusedAt, performance.now());
          return;
        }
      }
    };
    const hammers = outcomes.map((mine) => hammer(mine));
    // The signal once every sender was answered: all are under way.
    await waitFor(() => (outcomes.every((mine) => mine.includes('200')) ? true : undefined), 10_000, 'a 200 for every sender');
    const signalledAt = performance.now();
    const exited = serve.stop('SIGTERM');
    await Promise.race([Promise.all(hammers), delay(5000)]);
    stop = true;
    await Promise.all(hammers);
    expect(await exited).toBe(0);
    // Until the listener closes (a sender's refusal), every connection is answered: 200 before the
    // signal, 503 after it. Only a connection caught in the kernel's accept queue at the very
    // instant the listener closes can go unanswered, as with any server: the last before the refusal.
    for (const mine of outcomes) expect(mine.join(' ')).toMatch(/^(200 )+(503 )*((?!200|503)\S+ )?ECONNREFUSED$/);
    expect(outcomes.flat()).toContain('503');
    // The listener stayed open the 100 ms grace after the signal (load can only lengthen this).
    expect(refusedAt - signalledAt).toBeGreaterThan(90);
  });

  it('warns once when an existing database can be read by others', async () => {
    const db = join(tmp.dir, 'open.db');
    expect((await runCliProcess(['replay', SHUFFLED, '--db', db])).code).toBe(0);
    chmodSync(db, 0o644);
    const loose = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', db, '--secret', SECRET, '--log-level', 'warn']);
    await loose.stop();
    const warnings = (loose.stdout() + loose.stderr()).split('\n').filter((l) => l.includes('can be read by other users'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('chmod 600');
  });
});

/** A small filesystem of our own, to fill for real (needs root and mount; skipped otherwise). */
function smallFilesystem(): string | undefined {
  const dir = join(tempDir().dir, 'small');
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    return undefined;
  }
}

const small = process.getuid?.() === 0 ? smallFilesystem() : undefined;
// Root and a mount are this machine's to give, not a package to install: skipped (loudly) in CI too.
if (small === undefined) warnSkipped('NOT ROOT, OR mount -t tmpfs REFUSED: SKIPPED readiness on a disk that fills up (serve-edges).');

describe.skipIf(small === undefined)('readiness on a disk that fills up and frees again', () => {
  afterAll(() => {
    killChildren();
    try {
      execFileSync('umount', [small!], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  });

  it('is false while webhooks cannot be stored, answered 503, and true again once they can, without a restart', async () => {
    const serve = await startServe([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--db',
      join(small!, 'hooks.db'),
      '--secret',
      SECRET,
      '--log-level',
      'warn',
    ]);
    const filler = join(small!, 'filler');
    // All but a little of what is left once the database is made (its schema grows with the versions).
    const free = statfsSync(small!);
    writeFileSync(filler, Buffer.alloc(Math.max(0, free.bavail * free.bsize - 200_000)));
    const statuses: number[] = [];
    for (let i = 0; i < 400 && !statuses.includes(503); i++) {
      const request = signedRequest(sampleEvent('candidate.added', { data: { candidate_id: `full-${i}`, first_name: 'x'.repeat(2000) } }), {
        secret: SECRET,
      });
      statuses.push((await fetch(serve.webhookUrl, { method: 'POST', headers: request.headers, body: request.body })).status);
    }
    expect(statuses).toContain(503);
    const notReady = await fetch(`${serve.baseUrl}/readyz`);
    expect(notReady.status).toBe(503);
    expect(((await notReady.json()) as { reason: string }).reason).toMatch(/FULL|IOERR/);

    rmSync(filler);
    await waitFor(async () => ((await fetch(`${serve.baseUrl}/readyz`)).status === 200 ? true : undefined), 10_000, 'ready again');
    const request = signedRequest(sampleEvent('candidate.added', { data: { candidate_id: 'after' } }), { secret: SECRET });
    expect((await fetch(serve.webhookUrl, { method: 'POST', headers: request.headers, body: request.body })).status).toBe(200);
    expect(await serve.stop()).toBe(0);
  }, 30_000);
});
