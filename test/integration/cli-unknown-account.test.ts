// `--account` names an account of the registry, for every command that takes it: an unknown id is
// refused with send's words (exit 1), before anything is read or written, on either engine.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAccounts } from '../../src/accounts/index.js';
import { createKeyFile, newKey } from '../../src/accounts/key-file.js';
import { CommandError, type CommandIo } from '../../src/cli/args.js';
import { deadLetters } from '../../src/cli/dead-letters.js';
import { erase } from '../../src/cli/erase.js';
import { exportCommand } from '../../src/cli/export.js';
import { inspect } from '../../src/cli/inspect.js';
import { rebuild } from '../../src/cli/rebuild.js';
import { reconcile } from '../../src/cli/reconcile.js';
import { replay } from '../../src/cli/replay.js';
import { openStore } from '../../src/store/open.js';
import { FIXTURES } from '../support/cli-process.js';
import { runCli, runCommand } from '../support/command-io.js';
import { ENGINES } from '../support/engines.js';
import { tempDir } from '../support/servers.js';
import { sqlOn } from '../support/sql.js';

const UNKNOWN = /has no account "typo" \("prequal-hooks accounts list" shows them\)$/;
const CANDIDATE = '1d44285c-2fed-4395-91cc-91d91204e3cd'; // fixtures/events/candidate.added.json
const API = ['--api-url', 'http://127.0.0.1:1', '--api-key', `pk_live_${'a'.repeat(32)}`];

type Command = (argv: string[], io: CommandIo) => Promise<number>;

/** Each command that takes --account, called for the unknown account "typo". */
const CALLS: Array<[string, Command, (db: string) => string[]]> = [
  ['inspect', inspect, (db) => ['--db', db, '--json']],
  ['export', exportCommand, (db) => ['--db', db, '--candidate', CANDIDATE]],
  ['dead-letters', deadLetters, (db) => ['--db', db, '--json']],
  ['dead-letters reprocess', deadLetters, (db) => ['reprocess', '--db', db, '--all', '--json']],
  ['erase', erase, (db) => ['--db', db, '--candidate', CANDIDATE, '--reason', 'test']],
  ['erase --inactive-for', erase, (db) => ['--db', db, '--inactive-for', '1d', '--reason', 'test']],
  ['replay', replay, (db) => [`${FIXTURES}events`, '--db', db]],
  ['rebuild', rebuild, (db) => ['--db', db]],
  ['reconcile', reconcile, (db) => ['--db', db, ...API]],
];

describe.each(ENGINES)('--account on $name', (engine) => {
  const keys = tempDir('prequal-hooks-keys-');
  let database: string;
  let cleanup: () => void = () => undefined;
  const stored = async () =>
    await sqlOn(database).query<{ account: string; n: number }>(
      'SELECT account, count(*) AS n FROM inbox GROUP BY account ORDER BY account',
    );
  const erasures = async () => (await sqlOn(database).query<{ n: number }>('SELECT count(*) AS n FROM erasures'))[0]!.n;

  beforeAll(async () => {
    ({ database, cleanup } = await engine.fresh());
    expect((await runCommand(replay, [`${FIXTURES}events`, '--db', database])).code).toBe(0);
    const keyFile = join(keys.dir, 'accounts-key');
    createKeyFile(keyFile, newKey());
    const store = await openStore(database);
    try {
      await openAccounts(store, { keyFile }).add({ account: 'acme', secret: 'whsec_unknown-account-test-acme' });
    } finally {
      await store.close();
    }
  });
  afterAll(() => {
    cleanup();
    keys.cleanup();
  });

  it.each(CALLS)('%s --account typo is refused, and writes nothing', async (_name, command, argv) => {
    const before = { stored: await stored(), erasures: await erasures() };
    const run = await runCommand(command, [...argv(database), '--account', 'typo']);
    expect(run.error).toBeInstanceOf(CommandError);
    expect(run.error?.message).toMatch(UNKNOWN);
    expect(run.stdout).toBe('');
    expect({ stored: await stored(), erasures: await erasures() }).toEqual(before);
    expect(before.stored.map((r) => r.account)).not.toContain('typo');
  });

  it('takes a registered account, and the default one', async () => {
    for (const account of ['acme', 'default']) {
      const run = await runCommand(inspect, ['--db', database, '--json', '--account', account]);
      expect(run).toMatchObject({ code: 0, error: undefined });
    }
    const replayed = await runCommand(replay, [`${FIXTURES}events`, '--db', database, '--account', 'acme']);
    expect(replayed.code).toBe(0);
    expect((await stored()).map((r) => r.account)).toEqual(['acme', 'default']);
  });
});

describe('--account typo through the command line (src/cli/run.ts)', () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());

  it('exits 1 with the message, on a database that exists and on none (which replay does not create)', async () => {
    expect((await runCli(['replay', `${FIXTURES}events`, '--db', tmp.dbPath])).code).toBe(0);
    const exported = await runCli(['export', '--db', tmp.dbPath, '--account', 'typo', '--candidate', CANDIDATE]);
    expect(exported).toMatchObject({ code: 1, stdout: '' });
    expect(exported.stderr).toBe(`prequal-hooks export: ${tmp.dbPath} has no account "typo" ("prequal-hooks accounts list" shows them)\n`);
    const none = join(tmp.dir, 'none.db');
    const replayed = await runCli(['replay', `${FIXTURES}events`, '--db', none, '--account', 'typo']);
    expect(replayed.code).toBe(1);
    expect(replayed.stderr).toBe(`prequal-hooks replay: ${none} has no account "typo" ("prequal-hooks accounts list" shows them)\n`);
    expect(existsSync(none)).toBe(false);
  });
});
