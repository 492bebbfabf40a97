// `prequal-hooks serve` as a process: its environment, logs, secrets and SIGTERM. Its usage errors:
// test/integration/cli-serve.test.ts, in this process.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { secretFingerprint } from '../../src/signature.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { tempDir } from '../support/servers.js';
import { killChildren, readDb, runCliProcess, startServe } from '../support/cli-process.js';
import { waitFor } from '../support/wait-for.js';

const OLD_SECRET = 'whsec_serve_old_6c1f9a';
const NEW_SECRET = 'whsec_serve_new_02be4d';

// Personal data that must never reach a log line.
const PII = { first_name: 'Zéphyrine', last_name: 'Quillévéré', email: 'zephyrine.quillevere@exemple.fr', phone: '+33611223344' };
const CANDIDATE = 'cand-serve-e2e-1';

async function post(url: string, request: { body: Buffer; headers: Record<string, string> }) {
  const response = await fetch(url, { method: 'POST', headers: request.headers, body: request.body });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function get(url: string) {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

// The tests are independent (each its own database): run concurrently, their processes share the cores.
describe.concurrent('prequal-hooks serve', () => {
  const tmp = tempDir('prequal-hooks-serve-');
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });

  it('takes PORT, PREQUAL_HOOKS_DB and comma-separated PREQUAL_HOOKS_SECRET from the environment, logs one line per request without secrets or PII, and drains on SIGTERM', async () => {
    const dbPath = join(tmp.dir, 'from-env', 'hooks.db');
    const serve = await startServe(['--host', '127.0.0.1'], {
      PORT: '0',
      PREQUAL_HOOKS_DB: dbPath,
      PREQUAL_HOOKS_SECRET: `${OLD_SECRET}, ${NEW_SECRET}`,
    });
    // PORT=0 was honoured (an ephemeral port, not the default 8787), the folder and file were created.
    const port = Number(new URL(serve.baseUrl).port);
    expect(port).toBeGreaterThan(0);
    expect(port).not.toBe(8787);
    expect(existsSync(dbPath)).toBe(true);

    const added = sampleEvent('candidate.added', { data: { candidate_id: CANDIDATE, ...PII } });
    const completed = sampleEvent('candidate.interview.completed', { data: { candidate_id: CANDIDATE, ...PII, interview_score: 8.5 } });
    const signedOld = signedRequest(added, { secret: OLD_SECRET });
    const signedNew = signedRequest(added, { secret: NEW_SECRET });
    const completedNew = signedRequest(completed, { secret: NEW_SECRET });

    // Both secrets of the rotation are accepted; a third is not.
    expect(await post(serve.webhookUrl, signedOld)).toEqual({ status: 200, body: { received: true, duplicate: false } });
    expect(await post(serve.webhookUrl, signedNew)).toEqual({ status: 200, body: { received: true, duplicate: true } });
    expect((await post(serve.webhookUrl, completedNew)).status).toBe(200);
    const forged = signedRequest(completed, { secret: 'whsec_someone_else' });
    expect((await post(serve.webhookUrl, forged)).status).toBe(401);

    // Rows are in the SQLite file as soon as the 2xx is given.
    expect(readDb(dbPath, (db) => db.prepare('SELECT kind FROM inbox ORDER BY inbox_id').pluck().all())).toEqual([
      'candidate.added',
      'candidate.interview.completed',
    ]);

    const health = await get(`${serve.baseUrl}/healthz`);
    expect(health).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await get(`${serve.baseUrl}/readyz`)).toEqual({ status: 200, body: { status: 'ready' } });
    const elsewhere = await get(`${serve.baseUrl}/elsewhere`);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.error.code).toBe('RESOURCE_NOT_FOUND');
    const postedElsewhere = await fetch(`${serve.baseUrl}/webhook`, { method: 'POST', headers: signedOld.headers, body: signedOld.body });
    expect(postedElsewhere.status).toBe(404);
    await postedElsewhere.arrayBuffer();

    // One JSON log line per webhook request taken, with status, kind, duplicate flag and duration;
    // the refused one counted in a summary line instead.
    const requests = () => serve.logLines().filter((line) => line.msg === 'webhook');
    const refused = () => serve.logLines().filter((line) => line.outcome === 'refused' && line.reason === 'INVALID_SIGNATURE');
    await waitFor(() => requests().length >= 3 && refused().length >= 1, 5000, 'three webhook lines and the refusals summary');
    const logged = requests();
    expect(logged.map(({ status, kind, duplicate }) => ({ status, kind, duplicate }))).toEqual([
      { status: 200, kind: 'candidate.added', duplicate: false },
      { status: 200, kind: 'candidate.added', duplicate: true },
      { status: 200, kind: 'candidate.interview.completed', duplicate: false },
    ]);
    for (const line of logged) expect(line.ms).toEqual(expect.any(Number));
    expect(refused()).toEqual([expect.objectContaining({ status: 401, count: 1, clients: [{ client: '127.0.0.1', count: 1 }] })]);

    // SIGTERM: exit 0 within seconds, everything stored is projected.
    const startedStopping = Date.now();
    expect(await serve.stop('SIGTERM', 5000)).toBe(0);
    expect(Date.now() - startedStopping).toBeLessThan(5000);
    const candidate = readDb(dbPath, (db) =>
      db.prepare('SELECT status, interview_score, first_name FROM candidates WHERE candidate_id = ?').get(CANDIDATE),
    );
    expect(candidate).toEqual({ status: 'completed', interview_score: 8.5, first_name: PII.first_name });
    expect(readDb(dbPath, (db) => db.prepare("SELECT COUNT(*) FROM inbox WHERE state <> 'projected'").pluck().get())).toBe(0);

    const output = serve.stdout() + serve.stderr();
    const signatures = [signedOld, signedNew, completedNew, forged].map((r) => r.headers['x-service-signature']!.slice('sha256='.length));
    for (const secret of [OLD_SECRET, NEW_SECRET, ...signatures, ...Object.values(PII)]) expect(output).not.toContain(secret);
  });

  it("writes every request's access-log line, once, before it exits on SIGTERM (lines are held in batches until then)", async () => {
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', join(tmp.dir, 'flush.db'), '--secret', OLD_SECRET]);
    // Fewer lines than a 4 KB batch, and more than one batch: the last of each are held when SIGTERM comes.
    const events = Array.from({ length: 45 }, (_, i) =>
      sampleEvent('candidate.added', { data: { candidate_id: `cand-flush-${i}`, ...PII } }),
    );
    const answers = [];
    for (const event of events) answers.push(await post(serve.webhookUrl, signedRequest(event, { secret: OLD_SECRET })));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(await serve.stop('SIGTERM', 5000)).toBe(0);
    await waitFor(() => serve.child.stdout!.readableEnded || undefined, 5000, 'the end of stdout');

    const lines = serve
      .stdout()
      .split('\n')
      .filter((line) => line !== '');
    // Every line whole (no write cut another), and none twice.
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(new Set(lines).size).toBe(lines.length);
    const webhooks = parsed.filter((line) => line.msg === 'webhook');
    expect(webhooks.map((line) => line.inboxId)).toEqual(Array.from({ length: 45 }, (_, i) => i + 1));
    expect(webhooks.every((line) => line.status === 200 && line.kind === 'candidate.added' && line.outcome === 'stored')).toBe(true);
    expect(parsed.at(-1)?.msg).toBe('stopped');
    for (const value of Object.values(PII)) expect(serve.stdout()).not.toContain(value);
  });

  it('generates a secret at the first start, shows it once on stderr, reuses it at the next start, and `secret` prints it', async () => {
    const dbPath = join(tmp.dir, 'generated.db');
    const first = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', dbPath]);
    const banner = /whsec_[0-9a-f]{64}/.exec(first.stderr());
    expect(banner).not.toBeNull();
    const generated = banner![0];
    expect(first.stdout()).not.toContain(generated);
    const event = sampleEvent('credits.low');
    expect((await post(first.webhookUrl, signedRequest(event, { secret: generated }))).status).toBe(200);
    expect(await first.stop()).toBe(0);

    const second = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', dbPath]);
    // The same secret verifies at the second start; it is named by fingerprint, never shown again.
    expect((await post(second.webhookUrl, signedRequest(sampleEvent('credits.depleted'), { secret: generated }))).status).toBe(200);
    expect(second.stderr()).toContain(secretFingerprint(generated));
    expect(second.stdout() + second.stderr()).not.toContain(generated);
    expect(await second.stop()).toBe(0);

    const shown = await runCliProcess(['secret', '--db', dbPath]);
    expect(shown).toEqual({ code: 0, stdout: `${generated}\n`, stderr: '' });
  });

  it('starts with the removed --sqlite-thread, warns that it is ignored, and stores and projects as ever', async () => {
    const dbPath = join(tmp.dir, 'old-config.db');
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', dbPath, '--secret', NEW_SECRET, '--sqlite-thread']);
    expect(serve.stderr()).toContain('WARNING: --sqlite-thread is ignored (the option was removed)');
    expect(
      (
        await post(
          serve.webhookUrl,
          signedRequest(sampleEvent('candidate.added', { data: { candidate_id: 'c-old-config' } }), { secret: NEW_SECRET }),
        )
      ).status,
    ).toBe(200);
    expect(await serve.stop()).toBe(0);
    expect(readDb(dbPath, (db) => db.prepare('SELECT candidate_id FROM candidates').all())).toEqual([{ candidate_id: 'c-old-config' }]);
  });

  it('`secret` exits 1 with a message when the database holds no generated secret, or does not exist', async () => {
    const dbPath = join(tmp.dir, 'signed.db');
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', dbPath, '--secret', OLD_SECRET]);
    expect(await serve.stop()).toBe(0);
    const none = await runCliProcess(['secret', '--db', dbPath]);
    expect(none.code).toBe(1);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/holds no generated secret/);
    const missing = await runCliProcess(['secret', '--db', join(tmp.dir, 'nowhere.db')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no database at/);
    expect(existsSync(join(tmp.dir, 'nowhere.db'))).toBe(false);
  });

  it('--allow-unsigned warns loudly and accepts unsigned events', async () => {
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', join(tmp.dir, 'unsigned.db'), '--allow-unsigned']);
    // The log is written asynchronously: the warning may land just after the listening line.
    const warning = await waitFor(
      () => serve.logLines().find((line) => String(line.msg).includes('UNSIGNED EVENTS ARE ACCEPTED')),
      5000,
      'the unsigned warning',
    );
    expect(warning.level).toBe(40);
    const unsigned = signedRequest(sampleEvent('campaign.created'));
    expect(unsigned.headers['x-service-signature']).toBeUndefined();
    expect((await post(serve.webhookUrl, unsigned)).status).toBe(200);
    expect(await serve.stop()).toBe(0);
  });
});
