import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookEvent } from '../../src/events/index.js';
import { replay, replayInto } from '../../src/replay/index.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { migrate } from '../../src/store/sqlite/migrations.js';
import { loadMigrations } from '../../src/store/migrations.js';
import { openStore } from '../../src/store/open.js';
import { IdentitySet } from '../../src/store/sqlite/identity-set.js';
import { CLI, cliEnv, killChildren, runCliProcess } from '../support/cli-process.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'prequal-bulk-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => killChildren());

const added = (i: number): WebhookEvent => ({
  event: 'candidate.added',
  timestamp: new Date(Date.UTC(2026, 10, 20) + i * 1000).toISOString(),
  data: {
    campaign_id: `cmp_${i % 7}`,
    candidate_id: `cand_${i}`,
    first_name: 'Éloïse',
    last_name: 'Martin',
    email: `c${i}@exemple.fr`,
    phone: '+33612345678',
    call_queued: true,
  },
});

function ndjson(name: string, count: number): string {
  const file = join(dir, name);
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(JSON.stringify(added(i)));
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

const indexNames = (db: Database.Database) =>
  db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name").pluck().all() as string[];

describe('bulk load into an empty SQLite database', () => {
  it('takes the bulk path only into an empty database, and the batched one after', async () => {
    const db = new Database(':memory:');
    const store = await openStore(db);
    const paths: boolean[] = [];
    const onProgress = (_: unknown, progress: { bulk: boolean }) => void paths.push(progress.bulk);
    const first = await replayInto({ store }, [added(1), added(2), added(1)], { onProgress });
    const second = await replayInto({ store }, [added(2), added(3)], { onProgress });
    expect(paths).toEqual([true, false]);
    expect(first).toMatchObject({ received: 3, duplicates: 1, projected: 2 });
    expect(second).toMatchObject({ received: 2, duplicates: 1, projected: 1 });
    // The identity index is back: a repeat is still refused by the database itself.
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'inbox_identity'").all()).toHaveLength(1);
    await store.close();
    db.close();
  });

  it('writes without the WAL when it has the file to itself, and gives the WAL back', async () => {
    const alone = join(dir, 'alone.db');
    expect(await replay([added(1), added(2)], { database: alone })).toMatchObject({ projected: 2 });
    const shared = join(dir, 'shared.db');
    const store = await openStore(shared);
    const other = new Database(shared);
    other.prepare('SELECT COUNT(*) FROM inbox').get(); // another connection holds the file open
    expect(await replayInto({ store }, [added(1), added(2)])).toMatchObject({ projected: 2 });
    await store.close();
    other.close();
    for (const path of [alone, shared]) {
      const db = new Database(path, { readonly: true });
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.prepare('SELECT COUNT(*) FROM candidates').pluck().get()).toBe(2);
      db.close();
    }
  });

  it('an error half-way leaves the database as it was: empty, with its indexes', async () => {
    const path = join(dir, 'interrupted.db');
    const store = await openStore(path);
    function* failing() {
      for (let i = 0; i < 1200; i++) yield added(i);
      throw new Error('the input broke');
    }
    await expect(replayInto({ store }, failing(), { batchSize: 100 })).rejects.toThrow('the input broke');
    await store.close();
    const db = new Database(path, { readonly: true });
    expect(db.prepare('SELECT COUNT(*) FROM inbox').pluck().get()).toBe(0);
    expect(db.prepare('SELECT COUNT(*) FROM candidates').pluck().get()).toBe(0);
    expect(indexNames(db)).toContain('inbox_identity');
    expect(indexNames(db)).toContain('candidates_by_campaign');
    db.close();
    expect(await replay([added(1)], { database: path })).toMatchObject({ projected: 1 });
  });

  it('kill -9 of the CLI in the middle of a bulk replay leaves an empty, sound database; the next run loads it all', async () => {
    const input = ndjson('big.ndjson', 60_000);
    const path = join(dir, 'killed.db');
    const child = spawn(process.execPath, [CLI, 'replay', input, '--db', path, '--progress', '5000'], {
      env: cliEnv(),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    await new Promise<void>((resolve, reject) => {
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        if (/received 10000/.test(chunk)) resolve();
      });
      child.once('exit', () => reject(new Error('the replay ended before it was killed')));
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));

    const db = openDatabase(path);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(db.prepare('SELECT COUNT(*) FROM inbox').pluck().get()).toBe(0);
    expect(indexNames(db)).toContain('inbox_identity');
    db.close();

    const again = await runCliProcess(['replay', input, '--db', path, '--json'], { timeoutMs: 60_000 });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ received: 60_000, duplicates: 0, projected: 60_000 });
    const after = new Database(path, { readonly: true });
    expect(after.prepare('SELECT COUNT(*) FROM candidates').pluck().get()).toBe(60_000);
    expect(after.prepare('SELECT COUNT(*) FROM campaigns').pluck().get()).toBe(7);
    after.close();
  }, 90_000);

  it('rebuild --batched and the bulk rebuild print the same summary', async () => {
    const input = ndjson('small.ndjson', 3000);
    const path = join(dir, 'rebuilt.db');
    expect((await runCliProcess(['replay', input, '--db', path])).code).toBe(0);
    const bulk = await runCliProcess(['rebuild', '--db', path, '--json']);
    const batched = await runCliProcess(['rebuild', '--db', path, '--json', '--batched']);
    expect(bulk.code).toBe(0);
    expect(JSON.parse(bulk.stdout)).toEqual({ events: 3000, projected: 3000, unknown: 0, dead: 0 });
    expect(JSON.parse(batched.stdout)).toEqual(JSON.parse(bulk.stdout));
    expect(bulk.stderr).toMatch(/rebuild: 3000 of 3000 events/);
  }, 30_000);
});

describe('migration 7: the identity index gets a name', () => {
  it('keeps every row, inbox id and reference, and the index still refuses a repeat', () => {
    const path = join(dir, 'v6.db');
    const old = new Database(path);
    old.pragma('journal_mode = WAL');
    old.pragma('foreign_keys = ON');
    migrate(
      old,
      loadMigrations('sqlite').filter((m) => m.version <= 6),
    );
    const insert = old.prepare(
      "INSERT INTO inbox (inbox_id, received_at, raw, identity, kind, verdict, state) VALUES (?, '2026-11-20T10:00:00.000Z', ?, ?, 'candidate.added', 'accepted', 'projected')",
    );
    insert.run(5, Buffer.from('{"a":1}'), 'a'.repeat(64));
    insert.run(9, Buffer.from('{"b":2}'), 'b'.repeat(64));
    old
      .prepare(
        "INSERT INTO handler_failures (inbox_id, handler, error, attempts, failed_at) VALUES (9, 'h', 'boom', 3, '2026-11-20T10:00:00.000Z')",
      )
      .run();
    old.close();

    const upgraded = openDatabase(path);
    // Stored as its 32 bytes since migration 24: read as hex.
    expect(upgraded.prepare('SELECT inbox_id, lower(hex(identity)) AS identity FROM inbox ORDER BY inbox_id').all()).toEqual([
      { inbox_id: 5, identity: 'a'.repeat(64) },
      { inbox_id: 9, identity: 'b'.repeat(64) },
    ]);
    expect(upgraded.pragma('foreign_key_check')).toEqual([]);
    expect(upgraded.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(indexNames(upgraded)).toEqual(
      expect.arrayContaining([
        'inbox_identity',
        'inbox_identity_undated',
        'inbox_raw_sha256',
        'inbox_pending',
        'inbox_set_aside',
        'inbox_handlers_pending',
        'inbox_by_key',
      ]),
    );
    expect(upgraded.prepare("SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'sqlite_autoindex_inbox%'").pluck().get()).toBe(0);
    expect(() =>
      upgraded
        .prepare("INSERT INTO inbox (received_at, raw, identity, verdict) VALUES ('x', x'00', unhex(?), 'accepted')")
        .run('a'.repeat(64)),
    ).toThrow(/UNIQUE/);
    // A handler failure still cannot name a row that does not exist.
    expect(() =>
      upgraded.prepare("INSERT INTO handler_failures (inbox_id, handler, error, attempts, failed_at) VALUES (77, 'h', 'e', 1, 'x')").run(),
    ).toThrow(/FOREIGN KEY/);
    upgraded.close();
  });
});

describe('IdentitySet', () => {
  it('tells identities apart that share their first 32 bits, across growth', () => {
    const rows = new Map<number, string>();
    const set = new IdentitySet((id) => rows.get(id));
    const ids: string[] = [];
    let wronglyFound = 0;
    for (let i = 0; i < 50_000; i++) {
      // Every 8 identities share a prefix; all differ after it.
      const identity = `${((Math.floor(i / 8) * 2654435761) >>> 0).toString(16).padStart(8, '0')}${i.toString(16).padStart(56, '0')}`;
      ids.push(identity);
      if (set.find(identity) !== undefined) wronglyFound++;
      rows.set(i + 1, identity);
      set.add(identity, i + 1);
    }
    expect(wronglyFound).toBe(0);
    for (let i = 0; i < ids.length; i += 97) expect(set.find(ids[i]!)).toBe(i + 1);
    expect(set.find(`ffffffff${'0'.repeat(56)}`)).toBeUndefined();
  });
});
