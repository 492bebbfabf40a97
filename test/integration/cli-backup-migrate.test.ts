// `prequal-hooks backup` and `migrate` in this process: what backup refuses to copy, migrate on a
// database of a newer release, and a dry run where no database is yet. A backup while serve
// receives, migrations then serve --no-migrate, and migrate processes racing:
// test/e2e/cli-backup-migrate.test.ts.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMigrations } from '../../src/store/migrations.js';
import { runCli } from '../support/command-io.js';
import { ENGINES } from '../support/engines.js';
import { olderDatabase } from '../support/older-database.js';
import { tempDir } from '../support/servers.js';

describe('prequal-hooks backup', () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());

  it("refuses what it cannot copy: no --to, no database, not ours; PostgreSQL is pg_dump's (exit 2)", async () => {
    expect((await runCli(['backup', '--db', join(tmp.dir, 'x.db')])).code).toBe(2);
    const missing = await runCli(['backup', '--db', join(tmp.dir, 'none.db'), '--to', join(tmp.dir, 'y.db')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no database at/);
    const foreign = join(tmp.dir, 'foreign.db');
    new Database(foreign).exec('CREATE TABLE t (x)').close();
    expect((await runCli(['backup', '--db', foreign, '--to', join(tmp.dir, 'z.db')])).stderr).toMatch(/not a prequal-hooks database/);
    const postgres = await runCli(['backup', '--db', 'postgres://hooks@127.0.0.1:1/hooks', '--schema', 'hooks', '--to', 'x']);
    expect(postgres.code).toBe(2);
    expect(postgres.stderr).toMatch(/pg_dump --format=custom --schema=hooks/);
    expect(postgres.stderr).toMatch(/pg_restore/);
  });
});

describe.each(ENGINES)('prequal-hooks migrate on $name', (engine) => {
  const known = loadMigrations(engine.name === 'postgres' ? 'postgres' : 'sqlite');

  it('refuses a database written by a newer version', async () => {
    const database = await olderDatabase(engine, known.at(-1)!.version);
    if (engine.name === 'postgres') {
      const client = new pg.Client({ connectionString: database });
      await client.connect();
      await client.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'from_the_future', now())");
      await client.end();
    } else {
      const db = new Database(database);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'from_the_future', 'x')").run();
      db.close();
    }
    const newer = await runCli(['migrate', '--db', database]);
    expect(newer.code).toBe(1);
    expect(newer.stderr).toMatch(/written by a newer prequal-hooks \(schema version 999/);
  });
});

describe('prequal-hooks migrate on a SQLite path where no database is yet', () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());
  const known = loadMigrations('sqlite').map(({ version, name }) => ({ version, name }));

  it('--dry-run lists every migration and creates nothing, neither the file nor its folder', async () => {
    const folder = join(tmp.dir, 'dry', 'data');
    const database = join(folder, 'hooks.db');
    const json = await runCli(['migrate', '--db', database, '--dry-run', '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      location: database,
      engine: 'sqlite',
      from: 0,
      known: known.at(-1)!.version,
      pending: known,
      applied: [],
      dryRun: true,
    });
    expect(json.stderr).toBe(
      `prequal-hooks migrate: no database at ${database}; every migration would apply (a dry run creates nothing)\n`,
    );
    const text = await runCli(['migrate', '--db', database, '--dry-run']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`${database} is at schema version 0; ${known.length} pending (nothing applied, --dry-run):`);
    for (const m of known) expect(text.stdout).toContain(`${String(m.version).padStart(3, '0')} ${m.name}`);
    expect(existsSync(join(tmp.dir, 'dry'))).toBe(false);
  });
});
