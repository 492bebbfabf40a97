// The real `prequal-hooks serve` process against signed bodies built to crash it: one deep body
// used to end the process, and the sender's retries ended it again after each restart.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sign } from '../../src/signature.js';
import { tempDir } from '../support/servers.js';
import { killChildren, readDb, runCliProcess, startServe } from '../support/cli-process.js';

const SECRET = 'whsec_hostile_e2e_41c7';
const DEPTH = 100_000;

async function send(url: string, body: Buffer | string) {
  const raw = Buffer.isBuffer(body) ? body : Buffer.from(body);
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-signature': sign(SECRET, raw) },
    body: raw,
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    body: (await response.json()) as Record<string, any>,
  };
}

describe('prequal-hooks serve under hostile signed bodies', () => {
  const tmp = tempDir('prequal-hooks-hostile-');
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });

  it(`answers bodies nested ${DEPTH.toLocaleString('en')} levels, and their retries, and stays up`, async () => {
    const dbPath = join(tmp.dir, 'hooks.db');
    const serve = await startServe(['--host', '127.0.0.1', '--port', '0', '--db', dbPath, '--secret', SECRET]);
    const event = (candidate: string, extra: string) =>
      `{"event":"candidate.added","timestamp":"2026-11-20T10:00:00Z","data":{"campaign_id":"cmp_e2e","candidate_id":"${candidate}"${extra}}}`;
    const cases: Array<[Buffer | string, number, string | null]> = [
      [event('arrays', `,"deep":${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`), 200, null],
      [event('objects', `,"deep":${'{"a":'.repeat(DEPTH)}{}${'}'.repeat(DEPTH)}`), 200, null],
      [`${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`, 400, 'INVALID_ENVELOPE'],
      [event('infinite', `,"deep":${'['.repeat(DEPTH)}1e400${']'.repeat(DEPTH)}`), 400, 'INVALID_JSON'],
      [Buffer.concat([Buffer.from(event('bytes', ',"x":"')), Buffer.from([0xff]), Buffer.from('"}}')]), 400, 'INVALID_JSON'],
    ];
    for (const [body, status, code] of cases) {
      // The sender tries once and retries 3 times.
      for (let attempt = 0; attempt < 4; attempt++) {
        const answer = await send(serve.webhookUrl, body);
        expect(answer.status).toBe(status);
        expect(answer.contentType).toMatch(/^application\/json/);
        if (code === null) expect(answer.body).toEqual({ received: true, duplicate: attempt > 0 });
        else expect(answer.body.error.code).toBe(code);
      }
    }
    expect((await fetch(`${serve.baseUrl}/healthz`)).status).toBe(200);
    expect(serve.child.exitCode).toBeNull();
    expect(await serve.stop('SIGTERM')).toBe(0);

    // One row per distinct body; bad ones under the SHA-256 of their bytes; deep events projected.
    const rows = readDb(dbPath, (db) => db.prepare('SELECT identity, raw_sha256, state FROM inbox ORDER BY inbox_id').all()) as Array<
      Record<string, string | null>
    >;
    expect(rows.map((r) => r.state)).toEqual(['projected', 'projected', 'dead', 'dead', 'dead']);
    expect(rows.slice(2).map((r) => r.raw_sha256)).toEqual(cases.slice(2).map(([body]) => createHash('sha256').update(body).digest('hex')));
    expect(rows.slice(2).every((r) => r.identity === null)).toBe(true);
    // Logs say what happened to each request, never the body.
    expect(serve.stdout()).not.toContain('[[[');
    expect(serve.logLines().filter((line) => line.msg === 'webhook')).toHaveLength(cases.length * 4);

    // The commands that read what was stored take the deep rows too.
    const listed = await runCliProcess(['dead-letters', '--json', '--db', dbPath]);
    expect(listed.code).toBe(0);
    const { events } = JSON.parse(listed.stdout) as {
      events: Array<{ verdict: string; reasons: Array<{ path: string; message: string }> }>;
    };
    expect(events.map((e) => e.verdict)).toEqual(['invalid_envelope', 'invalid_json', 'invalid_json']);
    expect(events[1]!.reasons[0]!.path).toMatch(/^data\.deep\[0\].*more levels/);
    const table = await runCliProcess(['dead-letters', '--table', '--db', dbPath]);
    expect(table.code).toBe(0);
    const inspected = await runCliProcess(['inspect', '--json', '--db', dbPath, '--campaign', 'cmp_e2e']);
    expect(inspected.code).toBe(0);
    expect(JSON.parse(inspected.stdout).pagination.total).toBe(2);
  });
});
