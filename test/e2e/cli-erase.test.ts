// `prequal-hooks erase` and `export` as an operator runs them: beside a running `serve`, on the real
// SQLite file (and PostgreSQL), with the file and its WAL read byte for byte afterwards, and killed
// mid-way: serve and the killed erase are processes, the other commands run in this process (runCli
// of command-io.ts). A person who applied twice: test/integration/cli-erase.test.ts.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleEvent, sendSigned } from '../../src/testing/index.js';
import { CLI, cliEnv, killChildren, startServe } from '../support/cli-process.js';
import { runCli } from '../support/command-io.js';
import { ENGINES } from '../support/engines.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'erase-test-secret-0123456789';
const PERSON = {
  candidate_id: 'cand-cli-erase',
  email: 'Marie.Private@example.net',
  phone: '+33699887766',
  first_name: 'Marie',
  last_name: 'Privée',
};
const SECRETS = [PERSON.email, PERSON.email.toLowerCase(), PERSON.phone, PERSON.first_name, PERSON.last_name, 'salaire-confidentiel'];
const events = () => [
  sampleEvent('campaign.created', { timestamp: '2026-02-01T09:00:00Z', data: { campaign_id: 'cmp_cli_erase' } }),
  sampleEvent('candidate.added', { timestamp: '2026-02-01T09:01:00Z', data: { campaign_id: 'cmp_cli_erase', ...PERSON } }),
  sampleEvent('candidate.interview.completed', {
    timestamp: '2026-02-02T09:00:00Z',
    data: { campaign_id: 'cmp_cli_erase', ...PERSON, salary_expectation: 'salaire-confidentiel', interview_score: 7 },
  }),
];
const fileText = (path: string) => {
  try {
    const bytes = readFileSync(path);
    return bytes.toString('latin1') + bytes.toString('utf8');
  } catch {
    return '';
  }
};

describe('prequal-hooks erase and export', () => {
  const tmp = tempDir();
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });

  it('erases while serve runs: the file and its WAL hold none of the erased strings, and export shows only the erasure', async () => {
    const db = join(tmp.dir, 'hooks.db');
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', db, '--secret', SECRET, '--log-level', 'warn']);
    try {
      for (const event of events()) expect((await sendSigned(serve.webhookUrl, event, { secret: SECRET })).status).toBe(200);
      const before = JSON.parse((await runCli(['export', '--db', db, '--candidate', PERSON.candidate_id])).stdout);
      expect(before.candidate).toMatchObject({ email: PERSON.email, salary_expectation: 'salaire-confidentiel' });
      expect(before.events).toHaveLength(2);

      const noReason = await runCli(['erase', '--db', db, '--email', PERSON.email]);
      expect(noReason.code).toBe(2);
      expect(noReason.stderr).toMatch(/--reason is required/);
      const unknown = await runCli(['erase', '--db', db, '--email', 'nobody@example.net', '--reason', 'request']);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/no candidate has that e-mail here; nothing was changed/);
      expect(unknown.stderr).not.toContain('nobody@example.net');
      const dry = JSON.parse(
        (await runCli(['erase', '--db', db, '--phone', PERSON.phone, '--reason', 'request', '--dry-run', '--json'])).stdout,
      );
      expect(dry).toMatchObject({ candidateIds: [PERSON.candidate_id], eventsRedacted: 2, dryRun: true });
      // Still there after the dry run, PII and all.
      expect(JSON.parse((await runCli(['export', '--db', db, '--candidate', PERSON.candidate_id])).stdout).candidate).toMatchObject({
        ...PERSON,
        interview_score: 7,
      });

      const erased = await runCli(['erase', '--db', db, '--email', PERSON.email.toUpperCase(), '--reason', 'GDPR art. 17 request 2026-11']);
      expect(erased.code).toBe(0);
      expect(erased.stdout).toMatch(/^erased candidate cand-cli-erase: 2 stored events redacted/);
      for (const secret of SECRETS) expect(erased.stdout + erased.stderr).not.toContain(secret);
      const onDisk = fileText(db) + fileText(`${db}-wal`);
      expect(SECRETS.filter((s) => onDisk.includes(s))).toEqual([]);

      // A redelivery is a duplicate and brings nothing back, while serve keeps running.
      for (const event of events().slice(1))
        expect((await sendSigned(serve.webhookUrl, event, { secret: SECRET })).body).toMatchObject({ duplicate: true });
      const after = JSON.parse((await runCli(['export', '--db', db, '--candidate', PERSON.candidate_id])).stdout);
      expect(after.candidate).toBeNull();
      expect(after.erasures).toEqual([{ erased_at: expect.any(String), reason: 'GDPR art. 17 request 2026-11', events_redacted: 2 }]);
      expect(SECRETS.filter((s) => JSON.stringify(after).includes(s))).toEqual([]);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  });

  it('retention: erase --inactive-for and serve --erase-inactive-after, counts only; bad durations refused with the forms', async () => {
    const db = join(tmp.dir, 'retention.db');
    const file = join(tmp.dir, 'retention.ndjson');
    writeFileSync(
      file,
      `${events()
        .map((e) => JSON.stringify(e))
        .join('\n')}\n`,
    );
    expect((await runCli(['replay', '--db', db, file])).code).toBe(0);
    const bad = await runCli(['erase', '--db', db, '--inactive-for', '2 years', '--reason', 'retention']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--inactive-for must be a whole number and a unit, s, m, h, d or w \(such as 730d or 104w\)/);
    const both = await runCli(['erase', '--db', db, '--inactive-for', '730d', '--candidate', 'x', '--reason', 'retention']);
    expect(both.code).toBe(2);
    // The events are from February 2026: not 730 days old yet, but older than 1 day.
    const none = JSON.parse((await runCli(['erase', '--db', db, '--inactive-for', '730d', '--reason', 'retention', '--json'])).stdout);
    expect(none).toMatchObject({ candidatesErased: 0, dryRun: false });
    const serve = await startServe([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--db',
      db,
      '--secret',
      SECRET,
      '--log-level',
      'info',
      '--erase-inactive-after',
      '1d',
    ]);
    try {
      const line = await waitFor(
        () => serve.logLines().find((l) => typeof l.msg === 'string' && l.msg.startsWith('retention:')),
        10_000,
        'the retention log line',
      );
      expect(line).toMatchObject({ msg: 'retention: 1 candidate erased', candidatesErased: 1 });
      for (const secret of SECRETS) expect(serve.stdout() + serve.stderr()).not.toContain(secret);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
    const exported = JSON.parse((await runCli(['export', '--db', db, '--candidate', PERSON.candidate_id])).stdout);
    expect(exported.erasures).toMatchObject([{ reason: 'retention' }]);
  });

  it.each(ENGINES.map((e) => [e.name, e] as const))(
    'an erasure killed with SIGKILL on %s leaves everything or nothing',
    async (_name, engine) => {
      const { database } = await engine.fresh();
      const file = join(tmp.dir, `events-${engine.name}.ndjson`);
      writeFileSync(
        file,
        `${events()
          .map((e) => JSON.stringify(e))
          .join('\n')}\n`,
      );
      expect((await runCli(['replay', '--db', database, file])).code).toBe(0);
      for (const delayMs of [0, 60, 200]) {
        const child = spawn(
          process.execPath,
          [CLI, 'erase', '--db', database, '--candidate', PERSON.candidate_id, '--reason', 'kill test'],
          { env: cliEnv(), stdio: 'ignore' },
        );
        const exited = new Promise((resolve) => child.once('exit', resolve));
        // A fixed pause on purpose: the kill lands at three moments of the command's run (before
        // it opens the database, early, late), as a crash would, with nothing to wait for.
        // eslint-disable-next-line no-restricted-syntax -- the moment of the kill, as above
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        child.kill('SIGKILL');
        await exited;
        const state = JSON.parse((await runCli(['export', '--db', database, '--candidate', PERSON.candidate_id])).stdout);
        const done = state.erasures.length > 0;
        // All: no row, the events redacted, one erasure. Nothing: the row and the events whole.
        expect(state.candidate === null).toBe(done);
        expect(
          state.events.every(
            (e: { body: { data: Record<string, unknown> } }) =>
              Object.keys(e.body.data).length === (done ? 2 : Object.keys(e.body.data).length),
          ),
        ).toBe(true);
        expect(JSON.stringify(state.events).includes(PERSON.phone)).toBe(!done);
        if (done) return;
      }
    },
    60_000,
  );
});
