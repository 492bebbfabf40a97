import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { createGroupCommit } from '../../src/store/group-commit.js';
import { createSqliteStore } from '../../src/store/sqlite/store.js';
import { DatabaseTooNewError, loadMigrations } from '../../src/store/migrations.js';
import { tempDir } from '../support/servers.js';

const delivery = (n: number) => ({
  account: 'default',
  raw: Buffer.from(`{"n":${n}}`),
  receivedAt: new Date().toISOString(),
  identity: `id-${n}`,
  eventAt: null,
  kind: 'credits.low',
  verdict: 'accepted' as const,
  secretId: null,
  reasons: null,
});

describe('migrations', () => {
  it('are applied in order once, recorded with version and name, on a durable WAL database', () => {
    const tmp = tempDir();
    const db = openDatabase(tmp.dbPath);
    const recorded = db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all();
    expect(recorded).toEqual(loadMigrations('sqlite').map(({ version, name }) => ({ version, name })));
    expect(recorded.length).toBeGreaterThanOrEqual(2);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    db.close();
    const again = openDatabase(tmp.dbPath);
    expect(again.prepare('SELECT COUNT(*) FROM schema_migrations').pluck().get()).toBe(recorded.length);
    for (const table of ['inbox', 'campaigns', 'candidates', 'interview_responses', 'credits']) {
      expect(again.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?").pluck().get(table)).toBe(1);
    }
    again.close();
    tmp.cleanup();
  });

  it('refuse a database written by a newer version, with a clear message', () => {
    const tmp = tempDir();
    openDatabase(tmp.dbPath).close();
    const raw = new Database(tmp.dbPath);
    raw.prepare("INSERT INTO schema_migrations VALUES (999, 'from_the_future', '2030-01-01T00:00:00.000Z')").run();
    raw.close();
    expect(() => openDatabase(tmp.dbPath)).toThrow(DatabaseTooNewError);
    expect(() => openDatabase(tmp.dbPath)).toThrow(/newer prequal-hooks \(schema version 999/);
    tmp.cleanup();
  });
});

describe('group commit', () => {
  it('writes the deliveries of one event-loop turn in one transaction, and settles none before it commits', async () => {
    const tmp = tempDir();
    const db = openDatabase(tmp.dbPath);
    const commits: number[][] = [];
    const store = createSqliteStore(db, { location: 'test', busyTimeoutMs: 2000, ownsConnection: false });
    const writer = createGroupCommit(store, { onCommitted: (ids) => commits.push(ids) });
    const reader = new Database(tmp.dbPath, { readonly: true });
    const outcomes = Array.from({ length: 50 }, (_, n) =>
      writer.append(delivery(n)).then((outcome) => {
        // Settled only once the row is visible to another connection, i.e. committed.
        expect(reader.prepare('SELECT COUNT(*) FROM inbox WHERE identity = ?').pluck().get(`id-${n}`)).toBe(1);
        return outcome;
      }),
    );
    const dup = writer.append(delivery(7));
    const results = await Promise.all(outcomes);
    expect(results.every((r) => r.ok && !r.duplicate)).toBe(true);
    expect(await dup).toEqual({ ok: true, inboxId: null, duplicate: true });
    expect(commits).toHaveLength(1);
    expect(commits[0]).toHaveLength(50);
    reader.close();
    db.close();
    tmp.cleanup();
  });
});
