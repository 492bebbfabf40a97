// `prequal-hooks backup` and `migrate`, and `serve --no-migrate`, as an operator runs them: a
// backup taken while serve receives signed webhooks, and upgrades of databases made by an older
// schema (built by applying only the first migrations), on SQLite and PostgreSQL, with serve started
// after; migrate processes racing. serve, backup beside it (its event loop is not the senders') and
// the racing migrate are processes; the other commands run in this process (runInProcess). What
// needs no process at all: test/integration/cli-backup-migrate.test.ts.
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMigrations } from '../../src/store/migrations.js';
import { sampleEvent, sendSigned } from '../../src/testing/index.js';
import { killChildren, runCliProcess, startServe } from '../support/cli-process.js';
import { runCli as runInProcess } from '../support/command-io.js';
import { ENGINES } from '../support/engines.js';
import { olderDatabase } from '../support/older-database.js';
import { findBinaries } from '../support/postgres-server.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';
import { handlerKeyText } from '../../src/store/handler-keys.js';

const SECRET = 'backup-test-secret-0123456789';
const event = (n: number) =>
  sampleEvent('candidate.added', {
    timestamp: `2026-03-01T09:00:00.${String(n % 1000).padStart(3, '0')}Z`,
    data: { campaign_id: 'cmp_backup', candidate_id: `cand-backup-${n}` },
  });

describe('prequal-hooks backup', () => {
  const tmp = tempDir();
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });

  it('copies the database while serve receives webhooks: consistent, owner-only, holding every event acknowledged before it started', async () => {
    const db = join(tmp.dir, 'live.db');
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', db, '--secret', SECRET, '--log-level', 'warn']);
    let sent = 0;
    let sending = true;
    const acknowledged: number[] = [];
    // Four senders, never stopping while the backup runs.
    const senders = Array.from({ length: 4 }, async () => {
      while (sending) {
        const n = sent++;
        if ((await sendSigned(serve.webhookUrl, event(n), { secret: SECRET })).status === 200) acknowledged.push(n);
      }
    });
    try {
      await waitFor(() => acknowledged.length >= 300, 20_000, 'three hundred acknowledgements', { everyMs: 20 });
      const before = [...acknowledged];
      const copy = join(tmp.dir, 'copy.db');
      const result = await runCliProcess(['backup', '--db', db, '--to', copy, '--json'], { timeoutMs: 60_000 });
      const during = acknowledged.length;
      sending = false;
      await Promise.all(senders);
      expect(result.code).toBe(0);
      expect(during).toBeGreaterThan(before.length); // webhooks kept being acknowledged meanwhile
      expect(statSync(copy).mode & 0o777).toBe(0o600);
      const copied = new Database(copy, { readonly: true });
      try {
        expect(copied.pragma('integrity_check', { simple: true })).toBe('ok');
        const ids = new Set(
          (copied.prepare('SELECT handler_key FROM inbox').pluck().all() as Buffer[]).map((key) =>
            Number(handlerKeyText(key)!.split('-').at(-1)),
          ),
        );
        expect(before.filter((n) => !ids.has(n))).toEqual([]);
        expect(JSON.parse(result.stdout)).toMatchObject({ to: copy, events: ids.size });
      } finally {
        copied.close();
      }

      // An existing file is never overwritten by accident; --force replaces it whole.
      const again = await runCliProcess(['backup', '--db', db, '--to', copy]);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/exists: choose another --to, or give --force/);
      const forced = await runCliProcess(['backup', '--db', db, '--to', copy, '--force']);
      expect(forced.code).toBe(0);
      expect(forced.stdout).toMatch(/integrity ok/);
      const itself = await runCliProcess(['backup', '--db', db, '--to', db, '--force']);
      expect(itself.code).toBe(1);
      expect(itself.stderr).toMatch(/--to names the database itself/);
    } finally {
      sending = false;
      await Promise.all(senders);
      expect(await serve.stop()).toBe(0);
    }
  });
});

describe.each(ENGINES)('prequal-hooks migrate and serve --no-migrate on $name', (engine) => {
  afterAll(() => killChildren());
  const known = loadMigrations(engine.name === 'postgres' ? 'postgres' : 'sqlite');
  const upTo = known.at(-3)!.version; // the last two are pending

  it('lists the pending migrations (--dry-run changes nothing), serve --no-migrate refuses to start, migrate applies them', async () => {
    const database = await olderDatabase(engine, upTo);
    const pending = known.filter((m) => m.version > upTo).map(({ version, name }) => ({ version, name }));

    const dry = await runInProcess(['migrate', '--db', database, '--dry-run', '--json']);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ from: upTo, known: known.at(-1)!.version, pending, applied: [], dryRun: true });
    expect(JSON.parse((await runInProcess(['migrate', '--db', database, '--dry-run', '--json'])).stdout).pending).toEqual(pending); // still pending

    const refused = await runCliProcess([
      'serve',
      '--db',
      database,
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--secret',
      SECRET,
      '--no-migrate',
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(
      new RegExp(
        `needs migrations ${pending.map((m) => `${m.version} \\(${m.name}\\)`).join(', ')} and was opened with --no-migrate: take a backup, then run "prequal-hooks migrate`,
      ),
    );
    const byVariable = await runCliProcess(['serve', '--db', database, '--port', '0', '--host', '127.0.0.1', '--secret', SECRET], {
      env: { PREQUAL_HOOKS_NO_MIGRATE: '1' },
    });
    expect(byVariable.code).toBe(1);

    const applied = await runInProcess(['migrate', '--db', database]);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(new RegExp(`schema version ${upTo} → ${known.at(-1)!.version}, applied:`));
    for (const m of pending) expect(applied.stdout).toContain(m.name);
    expect((await runInProcess(['migrate', '--db', database])).stdout).toMatch(/is up to date \(schema version \d+\)/);

    const serve = await startServe([
      '--db',
      database,
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--secret',
      SECRET,
      '--no-migrate',
      '--log-level',
      'warn',
    ]);
    expect((await sendSigned(serve.webhookUrl, event(1), { secret: SECRET })).status).toBe(200);
    expect(await serve.stop()).toBe(0);
  });
});

describe('prequal-hooks migrate on a SQLite path where no database is yet', () => {
  const tmp = tempDir();
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });
  const known = loadMigrations('sqlite').map(({ version, name }) => ({ version, name }));

  it('creates it with its folders, owner-only as serve does, and applies every migration; serve --no-migrate then starts on it', async () => {
    const database = join(tmp.dir, 'new', 'data', 'hooks.db');
    const created = await runInProcess(['migrate', '--db', database, '--json']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toBe(`prequal-hooks migrate: no database at ${database}; creating it\n`);
    expect(JSON.parse(created.stdout)).toMatchObject({
      from: 0,
      known: known.at(-1)!.version,
      pending: known,
      applied: known.map((m) => m.version),
    });
    expect(statSync(database).mode & 0o777).toBe(0o600);
    expect(statSync(join(tmp.dir, 'new', 'data')).mode & 0o777).toBe(0o700);
    expect(statSync(join(tmp.dir, 'new')).mode & 0o777).toBe(0o700);
    const again = await runInProcess(['migrate', '--db', database]);
    expect(again.stdout).toBe(`${database} is up to date (schema version ${known.at(-1)!.version}).\n`);
    expect(again.stderr).toBe('');
    const serve = await startServe([
      '--db',
      database,
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--secret',
      SECRET,
      '--no-migrate',
      '--log-level',
      'warn',
    ]);
    expect((await sendSigned(serve.webhookUrl, event(1), { secret: SECRET })).status).toBe(200);
    expect(await serve.stop()).toBe(0);
    expect(serve.stdout() + serve.stderr()).not.toContain('can be read by other users');
  });
});

describe.skipIf(ENGINES.length < 2)('PostgreSQL: replicas migrating at once, and the pg_dump lines backup advises', () => {
  const postgres = ENGINES.find((e) => e.name === 'postgres')!;

  it('three migrate processes at once: one applies every migration, the others none (the advisory lock)', async () => {
    const { database } = await postgres.fresh();
    const results = await Promise.all([1, 2, 3].map(() => runCliProcess(['migrate', '--db', database, '--json'], { timeoutMs: 30_000 })));
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    expect(results.map((r) => (JSON.parse(r.stdout) as { applied: number[] }).applied.length).sort((a, b) => a - b)).toEqual([
      0,
      0,
      loadMigrations('postgres').length,
    ]);
  }, 40_000);

  it('the advised pg_dump and pg_restore, run as printed, restore a --schema database elsewhere that reads the same', async () => {
    const { database } = await postgres.fresh();
    const serve = await startServe([
      '--db',
      database,
      '--schema',
      'hooks',
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--secret',
      SECRET,
      '--log-level',
      'warn',
    ]);
    for (let n = 0; n < 5; n++) expect((await sendSigned(serve.webhookUrl, event(n), { secret: SECRET })).status).toBe(200);
    expect(await serve.stop()).toBe(0);
    const bin = dirname((await findBinaries())?.initdb ?? '');
    if (!existsSync(join(bin, 'pg_dump'))) {
      console.warn(`SKIPPED: no pg_dump beside the test server's binaries (${bin}): the advised lines are not run`);
      return;
    }
    const advice = (await runInProcess(['backup', '--db', database, '--schema', 'hooks'])).stderr;
    const tmp = tempDir();
    const dump = join(tmp.dir, 'hooks.dump');
    const args = (line: string) =>
      line
        .trim()
        .split(' ')
        .slice(1)
        .map((a) => a.replace(/^--file=prequal-hooks\.dump$/, `--file=${dump}`).replace(/^"(.*)"$/, '$1'));
    execFileSync(join(bin, 'pg_dump'), args(/^\s*(pg_dump .*)$/m.exec(advice)![1]!));
    const { database: restored } = await postgres.fresh();
    const restore = args(/^\s*(pg_restore .*)$/m.exec(advice)![1]!).map((a) =>
      a === '--dbname="<url>"' ? `--dbname=${restored}` : a === 'prequal-hooks.dump' ? dump : a,
    );
    execFileSync(join(bin, 'pg_restore'), restore);
    const inbox = async (at: string) =>
      JSON.parse((await runInProcess(['inspect', '--db', at, '--schema', 'hooks', '--json'])).stdout).inbox;
    expect(await inbox(restored)).toEqual(await inbox(database));
    tmp.cleanup();
  }, 40_000);
});
