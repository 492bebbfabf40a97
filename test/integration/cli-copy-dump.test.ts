// `prequal-hooks copy` and `dump` in this process: what copy refuses (a receiver running on the
// source, a key that does not open the sealed values), leaving the target empty; dump's bodies
// byte for byte, whatever they hold, back through replay; an erased person's erasure carried by
// the dump, their bodies in it redacted. The whole move, serve on the copy and PostgreSQL:
// test/e2e/cli-copy-dump.test.ts.
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { newKey } from '../../src/accounts/key-file.js';
import { dumpEvents } from '../../src/transfer/dump.js';
import { runCli } from '../support/command-io.js';
import { ENGINES } from '../support/engines.js';
import { tempDir } from '../support/servers.js';
import { sqlOn } from '../support/sql.js';
import { FIXTURES } from '../support/cli-process.js';
import { INVALID_EVENT, leaked, ZELPHINE, ZELPHINE_EVENTS } from '../support/personal-bodies.js';
import { readStoreTables } from '../support/tables.js';
import { received } from '../support/bodies.js';

const tmp = tempDir('prequal-hooks-copy-');
afterAll(() => tmp.cleanup());

async function sourceWithAccount(name: string): Promise<string> {
  const db = join(tmp.dir, `${name}.db`);
  expect((await runCli(['replay', '--db', db, `${FIXTURES}scenarios/campaign-lifecycle.ndjson`])).code).toBe(0);
  expect((await runCli(['accounts', 'add', '--db', db, '--account', 'acme'])).code).toBe(0);
  return db;
}

const count = async (db: string) => Number((await sqlOn(db).query<{ n: number }>('SELECT COUNT(*) AS n FROM inbox'))[0]!.n);

/** Whether a copy refused before it wrote anything: no file, or no table. */
async function untouched(target: string): Promise<boolean> {
  if (!target.startsWith('postgres')) return !existsSync(target);
  return (await sqlOn(target).query<{ none: boolean }>("SELECT to_regclass('inbox') IS NULL AS none"))[0]!.none;
}

describe.each(ENGINES)('prequal-hooks copy from SQLite to $name', (engine) => {
  it('refuses while a receiver beats on the source, and writes nothing', async () => {
    const source = await sourceWithAccount(`beating-${engine.name}`);
    await sqlOn(source).query(
      "INSERT INTO receivers (receiver_id, pid, host, started_at, every_ms, seen_at) VALUES ('r1', 4242, 'web-1', '2026-01-01T00:00:00.000Z', 5000, ?)",
      [Date.now()],
    );
    const { database: target } = await engine.fresh();
    const refused = await runCli(['copy', '--from', source, '--to', target]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/a receiver is running on the source .*pid 4242 on host web-1.*stop it/);
    expect(await untouched(target)).toBe(true);
  });

  it('refuses a key file that does not open the sealed secrets, and names no secret', async () => {
    const source = await sourceWithAccount(`wrong-key-${engine.name}`);
    const wrong = join(tmp.dir, `wrong-${engine.name}.key`);
    writeFileSync(wrong, Buffer.from(newKey().key).toString('base64'), { mode: 0o600 });
    const { database: target } = await engine.fresh();
    const refused = await runCli(['copy', '--from', source, '--to', target, '--accounts-key-file', wrong]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/a secret of account acme is sealed under accounts key [0-9a-f]{16}, which .* does not hold/);
    expect(await untouched(target)).toBe(true);
    const ok = await runCli(['copy', '--from', source, '--to', target, '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ sealedChecked: 1, tables: { inbox: await count(source), accounts: 1 } });
  });
});

describe.each(ENGINES)('prequal-hooks dump of $name', (engine) => {
  it('writes each body as received, byte for byte, which replay stores again the same', async () => {
    const bodies = join(tmp.dir, `bodies-${engine.name}`);
    mkdirSync(bodies);
    writeFileSync(
      join(bodies, '1-pretty.json'),
      '{\n  "event": "campaign.created",\n  "timestamp": "2026-11-20T10:00:00Z",\n  "data": {"campaign_id": "cmp_pretty"}\n}\r\n',
    );
    writeFileSync(join(bodies, '2-binary.json'), Buffer.from([0x7b, 0xff, 0x0a, 0x00, 0x0d]));
    writeFileSync(join(bodies, '3-escaped.json'), '{"prequal-hooks:raw-base64":"e30="}');
    const { database } = await engine.fresh();
    expect((await runCli(['replay', '--db', database, `${FIXTURES}scenarios/campaign-lifecycle.ndjson`, bodies])).code).toBe(0);
    const dumped = await runCli(['dump', '--db', database]);
    expect(dumped.code, dumped.stderr).toBe(0);
    const stored = await count(database);
    expect(dumped.stderr).toContain(`${stored} events written`);
    // The bytes themselves (runCli's stdout is text): the same dump into a file.
    const file = join(tmp.dir, `dump-${engine.name}.ndjson`);
    const out = createWriteStream(file);
    expect(await dumpEvents(database, out, { account: 'default' })).toEqual({ erasures: 0, events: stored });
    await new Promise((resolve) => out.end(resolve));
    expect(readFileSync(file, 'utf8')).toBe(dumped.stdout);
    const again = join(tmp.dir, `again-${engine.name}.db`);
    expect((await runCli(['replay', '--db', again, file])).code).toBe(0);
    const raws = async (db: string) =>
      (await sqlOn(db).query<{ raw: Buffer; codec: number | null }>('SELECT raw, codec FROM inbox ORDER BY inbox_id')).map((r) =>
        received(r).toString('hex'),
      );
    expect(await raws(again)).toEqual(await raws(database));
  });
});

/** The account's erasures as the audit trail holds them: whom, and when (ms, either engine). */
const erasures = async (db: string) =>
  (
    await sqlOn(db).query<{ candidate_id: string; erased_at: string | Date }>(
      'SELECT candidate_id, erased_at FROM erasures ORDER BY erasure_id',
    )
  ).map((r) => ({ candidate: r.candidate_id, at: new Date(r.erased_at).getTime() }));

/** What a replay into `db` made: the projected tables and the erasures. */
const state = async (db: string) => ({ tables: await readStoreTables(db, { account: 'default' }), erasures: await erasures(db) });

describe.each(ENGINES)('prequal-hooks dump of $name, with an erased person', (engine) => {
  // Zelphine's events, erased; then a new contact under the same id, dated after the erasure.
  const later = {
    event: 'candidate.added',
    timestamp: '2030-01-01T00:00:00Z',
    data: { campaign_id: ZELPHINE_EVENTS[0]!.data.campaign_id, candidate_id: ZELPHINE, first_name: 'Anouk', email: 'anouk@example.org' },
  };

  async function erasedSource(): Promise<string> {
    const { database } = await engine.fresh();
    const events = join(tmp.dir, `zelphine-${engine.name}.ndjson`);
    writeFileSync(events, [...ZELPHINE_EVENTS, INVALID_EVENT].map((e) => JSON.stringify(e)).join('\n') + '\n');
    expect((await runCli(['replay', '--db', database, `${FIXTURES}scenarios/campaign-lifecycle.ndjson`, events])).code).toBe(0);
    expect((await runCli(['erase', '--db', database, '--candidate', ZELPHINE, '--reason', 'request by Zelphine'])).code).toBe(0);
    const after = join(tmp.dir, `later-${engine.name}.ndjson`);
    writeFileSync(after, JSON.stringify(later) + '\n');
    expect((await runCli(['replay', '--db', database, after])).code).toBe(0);
    return database;
  }

  it('writes a line per stored event after the erasure, none naming the person, and replay gives the same state', async () => {
    const source = await erasedSource();
    const dumped = await runCli(['dump', '--db', source]);
    expect(dumped.code, dumped.stderr).toBe(0);
    const lines = dumped.stdout.split('\n').slice(0, -1);
    const stored = await count(source);
    expect(lines).toHaveLength(1 + stored);
    expect(dumped.stderr).toContain(`${stored} events written, after 1 erasure`);
    const [erasure] = await erasures(source);
    expect(JSON.parse(lines[0]!)).toEqual({
      'prequal-hooks:erasure': { candidate_id: ZELPHINE, erased_at: new Date(erasure!.at).toISOString() },
    });
    // Neither the erased values (names, e-mail, phone, free text) nor the operator's reason.
    expect(leaked(dumped.stdout)).toEqual([]);
    expect(dumped.stdout).not.toContain('request by');
    expect(lines.filter((l) => l.includes(ZELPHINE))).toHaveLength(1 + ZELPHINE_EVENTS.length + 2);

    const { database: target } = await engine.fresh();
    const replayed = await runCli(['replay', '-', '--db', target], { input: dumped.stdout });
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(replayed.stdout).toContain('erasures 1');
    const expected = await state(source);
    expect(expected.tables.candidates.find((c) => c.candidate_id === ZELPHINE)).toMatchObject({ first_name: 'Anouk' });
    expect(await state(target)).toEqual(expected);
    // Rebuilt, the person stays erased and the new contact stays; replayed again, nothing changes.
    expect((await runCli(['rebuild', '--db', target])).code).toBe(0);
    expect(await state(target)).toEqual(expected);
    const again = await runCli(['replay', '-', '--db', target], { input: dumped.stdout });
    expect(again.stdout).toContain(`duplicates ${stored}`);
    expect(await state(target)).toEqual(expected);
    const reasons = await sqlOn(target).query<{ reason: string }>('SELECT reason FROM erasures');
    expect(reasons).toEqual([{ reason: 'copied by replay' }]);
  });

  it('erases, as an erasure does, what a target held of the person, batch by batch too', async () => {
    const source = await erasedSource();
    const dumped = await runCli(['dump', '--db', source]);
    const { database: target } = await engine.fresh();
    const events = join(tmp.dir, `zelphine-only-${engine.name}.ndjson`);
    writeFileSync(events, ZELPHINE_EVENTS.map((e) => JSON.stringify(e)).join('\n') + '\n');
    expect((await runCli(['replay', '--db', target, events])).code).toBe(0);
    const replayed = await runCli(['replay', '-', '--db', target, '--batched'], { input: dumped.stdout });
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(await state(target)).toEqual(await state(source));
    const raws = await sqlOn(target).query<{ raw: Buffer; codec: number | null }>('SELECT raw, codec FROM inbox');
    expect(leaked(raws.map((r) => received(r).toString('utf8')).join('\n'))).toEqual([]);
  });

  it('writes every erasure of the account with --since, and none of another account', async () => {
    const source = await erasedSource();
    const since = await runCli(['dump', '--db', source, '--since', '2999-01-01T00:00:00Z']);
    expect(since.code, since.stderr).toBe(0);
    expect(since.stdout.split('\n').slice(0, -1)).toEqual([expect.stringMatching(/^\{"prequal-hooks:erasure":/)]);
    const keyFile = join(tmp.dir, `since-${engine.name}.key`);
    writeFileSync(keyFile, Buffer.from(newKey().key).toString('base64'), { mode: 0o600 });
    const added = await runCli(['accounts', 'add', '--db', source, '--account', 'acme', '--accounts-key-file', keyFile]);
    expect(added.code, added.stderr).toBe(0);
    const acme = await runCli(['dump', '--db', source, '--account', 'acme']);
    expect(acme.code, acme.stderr).toBe(0);
    expect(acme.stdout).toBe('');
  });
});
