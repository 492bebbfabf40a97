// `prequal-hooks send` against a real `prequal-hooks serve`. Its failures with no receiver in the
// way (nothing listening, no answer, usage errors): test/integration/cli-send.test.ts, in this process.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleEvent } from '../../src/testing/index.js';
import { tempDir } from '../support/servers.js';
import { FIXTURES, killChildren, readDb, runCliProcess, startServe, type ServeProcess } from '../support/cli-process.js';
import { waitFor } from '../support/wait-for.js';
import { received } from '../support/bodies.js';

const SECRET = 'whsec_send_e2e_4d2a71';

/** The last inbox row of a kind: its body as received. */
function lastBody(dbPath: string, kind: string): Buffer | undefined {
  return readDb(dbPath, (db) => {
    const row = db.prepare('SELECT raw, codec FROM inbox WHERE kind = ? ORDER BY inbox_id DESC LIMIT 1').get(kind) as
      { raw: Buffer; codec: number | null } | undefined;
    return row === undefined ? undefined : received(row);
  });
}

// The tests send different kinds to the one receiver: run concurrently, their processes share the cores.
describe.concurrent('prequal-hooks send, against a real prequal-hooks serve', () => {
  const tmp = tempDir('prequal-hooks-send-');
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', tmp.dbPath, '--secret', SECRET, '--log-level', 'warn']);
  });
  afterAll(async () => {
    await serve?.stop().catch(() => undefined);
    killChildren();
    tmp.cleanup();
  });

  it('sends a signed sample of a kind with --set changes, timestamped now: 200, exit 0, projected', async () => {
    const candidateId = sampleEvent('candidate.interview.completed').data.candidate_id;
    const before = Date.now();
    const result = await runCliProcess([
      'send',
      'candidate.interview.completed',
      '--url',
      serve.webhookUrl,
      '--secret',
      SECRET,
      '--set',
      'data.interview_score=9.5',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('HTTP 200 OK\n{"received":true,"duplicate":false}\n');
    expect(result.stderr).toBe('');

    const score = await waitFor(
      () =>
        readDb(tmp.dbPath, (db) =>
          db.prepare("SELECT interview_score FROM candidates WHERE candidate_id = ? AND status = 'completed'").pluck().get(candidateId),
        ),
      5000,
      'the candidate to be projected',
    );
    expect(score).toBe(9.5);
    const sent = JSON.parse(lastBody(tmp.dbPath, 'candidate.interview.completed')!.toString('utf8'));
    expect(Date.parse(sent.timestamp)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(sent.timestamp)).toBeLessThanOrEqual(Date.now());
  });

  it('reads --set values as JSON when they parse, as text otherwise, and sets the timestamp', async () => {
    const result = await runCliProcess(
      [
        'send',
        'candidate.added',
        '--url',
        serve.webhookUrl,
        '--set',
        'data.candidate_id=cand-set-1',
        '--set',
        'data.call_queued=false',
        '--set',
        'data.phone=+33699887766',
        '--set',
        'data.first_name="42"',
        '--set',
        'data.last_name=null',
        '--set',
        'timestamp=2026-11-20T11:00:00+01:00',
      ],
      { env: { PREQUAL_HOOKS_SECRET: `${SECRET},whsec_next_one` } },
    );
    expect(result.code).toBe(0);
    const sent = JSON.parse(lastBody(tmp.dbPath, 'candidate.added')!.toString('utf8'));
    expect(sent.timestamp).toBe('2026-11-20T11:00:00+01:00');
    expect(sent.data).toMatchObject({
      candidate_id: 'cand-set-1',
      call_queued: false,
      phone: '+33699887766',
      first_name: '42',
      last_name: null,
    });
  });

  it('sends --file byte for byte', async () => {
    const path = `${FIXTURES}events/credits.low.json`;
    const result = await runCliProcess(['send', '--file', path, '--url', serve.webhookUrl, '--secret', SECRET]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^HTTP 200 OK\n/);
    expect(lastBody(tmp.dbPath, 'credits.low')!.equals(readFileSync(path))).toBe(true);
    const credits = await waitFor(
      () => readDb(tmp.dbPath, (db) => db.prepare('SELECT credits_remaining, low_threshold FROM credits').get()),
      5000,
      'credits',
    );
    expect(credits).toEqual({ credits_remaining: 8.5, low_threshold: 10 });
  });

  it('exits 1 and prints the 401 when the secret is wrong, and warns when there is none', async () => {
    const [wrong, unsigned] = await Promise.all([
      runCliProcess(['send', 'credits.depleted', '--url', serve.webhookUrl, '--secret', 'whsec_wrong']),
      runCliProcess(['send', 'credits.depleted', '--url', serve.webhookUrl]),
    ]);
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toMatch(/^HTTP 401 Unauthorized\n.*"INVALID_SIGNATURE"/);
    expect(unsigned.code).toBe(1);
    expect(unsigned.stdout).toMatch(/^HTTP 401 Unauthorized\n.*"MISSING_SIGNATURE"/);
    expect(unsigned.stderr).toMatch(/warning: no secret/);
  });
});
