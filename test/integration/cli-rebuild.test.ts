import { afterAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { readDb, SHUFFLED } from '../support/cli-process.js';
import { runCli } from '../support/command-io.js';
import { tempDir } from '../support/servers.js';

describe('prequal-hooks rebuild', () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());

  it('re-projects the inbox into emptied tables, with progress on stderr, and changes nothing the second time', async () => {
    expect((await runCli(['replay', SHUFFLED, '--db', tmp.dbPath])).code).toBe(0);
    const before = readDb(tmp.dbPath, (db) => db.prepare('SELECT * FROM candidates ORDER BY candidate_id').all());
    const db = new Database(tmp.dbPath);
    db.exec(
      "UPDATE candidates SET interview_score = NULL; DELETE FROM campaigns; INSERT INTO credits (account, credits_remaining) VALUES ('default', 999) ON CONFLICT DO UPDATE SET credits_remaining = 999",
    );
    db.close();

    const result = await runCli(['rebuild', '--db', tmp.dbPath, '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ events: 46, projected: 46, unknown: 0, dead: 0 });
    expect(result.stderr).toMatch(/^prequal-hooks rebuild: 46 of 46 events \(\d+ events\/s\)$/m);
    const after = readDb(tmp.dbPath, (d) => d.prepare('SELECT * FROM candidates ORDER BY candidate_id').all());
    expect(after).toEqual(before);
    expect(readDb(tmp.dbPath, (d) => d.prepare('SELECT COUNT(*) FROM campaigns').pluck().get())).toBe(2);
    expect(readDb(tmp.dbPath, (d) => d.prepare('SELECT credits_remaining FROM credits').pluck().get())).toBe(0);

    const again = await runCli(['rebuild', '--db', tmp.dbPath]);
    expect(again.stdout).toMatch(/^events 46, projected 46, unknown 0, dead 0 \(/);
    expect(readDb(tmp.dbPath, (d) => d.prepare('SELECT * FROM candidates ORDER BY candidate_id').all())).toEqual(before);
  });

  it('exits 1 when the database does not exist, without creating it', async () => {
    const missing = `${tmp.dir}/nope.db`;
    const result = await runCli(['rebuild', '--db', missing]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/no database at/);
  });
});
