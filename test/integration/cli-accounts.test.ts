// `prequal-hooks accounts` as an integrator runs it on a real SQLite file: the JSON it prints, the
// key file it makes (owner-only), secrets never listed, and the errors of a wrong call.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/command-io.js';
import { tempDir } from '../support/servers.js';

const SECRET = 'whsec_cli-accounts-test-secret-7d2e91';
const API_KEY = 'pk_cli-accounts-test-api-key-5a1b';

describe('prequal-hooks accounts', () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());
  const db = tmp.dbPath;
  const keyFile = `${db}.accounts-key`;
  const accounts = (...args: string[]) => runCli(['accounts', ...args]);
  const json = (stdout: string) => JSON.parse(stdout) as Record<string, unknown>;

  it('adds an account with a generated secret, printed once, and makes the key file owner-only', async () => {
    const added = await accounts('add', '--db', db, '--account', 'agence-lyon', '--name', 'Agence de Lyon', '--json');
    expect(added.code).toBe(0);
    const body = json(added.stdout);
    expect(body).toMatchObject({ account: 'agence-lyon', name: 'Agence de Lyon', state: 'active' });
    expect(body.webhookPath).toMatch(/^\/webhooks\/[A-Za-z0-9_-]{32}$/);
    expect(body.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(Object.keys(body).sort()).toEqual(
      [
        'account',
        'createdAt',
        'fingerprint',
        'hasApiKey',
        'hasFeedToken',
        'name',
        'previousSecretUntil',
        'secret',
        'secrets',
        'state',
        'webhookPath',
      ].sort(),
    );
    expect(added.stderr).toContain(`generated the accounts key at ${keyFile}; back it up apart from the database`);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    // The next command uses the same key, and says nothing of generating one.
    const again = await accounts('add', '--db', db, '--account', 'paris', '--secret', SECRET, '--json');
    expect(again.code).toBe(0);
    expect(json(again.stdout)).not.toHaveProperty('secret');
    expect(again.stderr).not.toContain('generated');
  });

  it('takes the secret and the API key from files', async () => {
    const secretFile = join(tmp.dir, 'secret.txt');
    const apiKeyFile = join(tmp.dir, 'api-key.txt');
    writeFileSync(secretFile, `${SECRET}-file\n`);
    writeFileSync(apiKeyFile, `${API_KEY}\n`);
    const added = await accounts(
      'add',
      '--db',
      db,
      '--account',
      'nantes',
      '--secret-file',
      secretFile,
      '--api-key-file',
      apiKeyFile,
      '--json',
    );
    expect(added.code).toBe(0);
    expect(json(added.stdout)).toMatchObject({ account: 'nantes', hasApiKey: true });
    expect(json(added.stdout)).not.toHaveProperty('secret');
  });

  it('lists the default account and the others, never a secret or a key', async () => {
    const listed = await accounts('list', '--db', db, '--json');
    expect(listed.code).toBe(0);
    const { accounts: rows } = json(listed.stdout) as { accounts: Array<Record<string, unknown>> };
    expect(rows.map((r) => r.account)).toEqual(['default', 'agence-lyon', 'nantes', 'paris']);
    expect(rows[0]).toMatchObject({ account: 'default', webhookPath: '/webhooks' });
    for (const row of rows.slice(1)) expect(Object.keys(row)).toEqual(expect.arrayContaining(['account', 'name', 'webhookPath', 'state']));
    const table = await accounts('list', '--db', db, '--table');
    for (const output of [listed, table]) {
      for (const secret of [SECRET, API_KEY, readFileSync(keyFile, 'utf8').trim()]) {
        expect(output.stdout).not.toContain(secret);
        expect(output.stderr).not.toContain(secret);
      }
    }
  });

  it('disables and enables, rotates with an overlap, sets and clears an API key', async () => {
    expect(json((await accounts('disable', '--db', db, '--account', 'paris', '--json')).stdout)).toMatchObject({ state: 'disabled' });
    expect(json((await accounts('enable', '--db', db, '--account', 'paris', '--json')).stdout)).toMatchObject({ state: 'active' });
    const rotated = await accounts(
      'rotate-secret',
      '--db',
      db,
      '--account',
      'paris',
      '--secret',
      `${SECRET}-2`,
      '--keep-previous',
      '2h',
      '--json',
    );
    expect(rotated.code).toBe(0);
    const until = Date.parse(json(rotated.stdout).previousSecretUntil as string);
    expect(Math.abs(until - (Date.now() + 2 * 3600_000))).toBeLessThan(60_000);
    const listed = json((await accounts('list', '--db', db, '--json')).stdout) as { accounts: Array<Record<string, unknown>> };
    expect(listed.accounts.find((a) => a.account === 'paris')).toMatchObject({ secrets: 2 });
    const apiKeyFile = join(tmp.dir, 'paris-key.txt');
    writeFileSync(apiKeyFile, API_KEY);
    expect(
      json((await accounts('set-api-key', '--db', db, '--account', 'paris', '--api-key-file', apiKeyFile, '--json')).stdout),
    ).toMatchObject({
      hasApiKey: true,
    });
    expect(json((await accounts('set-api-key', '--db', db, '--account', 'paris', '--clear', '--json')).stdout)).toMatchObject({
      hasApiKey: false,
    });
  });

  it('set-feed-token reads the token from a file, keeps its SHA-256 only, and --clear removes it; a short token or neither is refused', async () => {
    const token = 'cli-accounts-test-feed-token-9e4a';
    const tokenFile = join(tmp.dir, 'feed-token.txt');
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    const set = await accounts('set-feed-token', '--db', db, '--account', 'paris', '--token-file', tokenFile, '--json');
    expect(set.code, set.stderr).toBe(0);
    expect(json(set.stdout)).toMatchObject({ account: 'paris', hasFeedToken: true });
    expect(set.stdout).not.toContain(token);
    const text = await accounts('set-feed-token', '--db', db, '--account', 'paris', '--token-file', tokenFile);
    expect(text.stdout).toBe(
      'account paris: feed token set; it opens GET /changes?account=paris alone (a running serve takes it within 2 seconds)\n',
    );
    const table = await accounts('list', '--db', db, '--table');
    expect(table.stdout).toMatch(/FEED TOKEN/);
    const listed = json((await accounts('list', '--db', db, '--json')).stdout) as { accounts: Array<Record<string, unknown>> };
    expect(listed.accounts.map((a) => [a.account, a.hasFeedToken])).toEqual([
      ['default', false],
      ['agence-lyon', false],
      ['nantes', false],
      ['paris', true],
    ]);
    const taken = await accounts('set-feed-token', '--db', db, '--account', 'nantes', '--token-file', tokenFile);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain("this feed token is another account's");

    const shortFile = join(tmp.dir, 'short-token.txt');
    writeFileSync(shortFile, 'fifteen-chars!!\n');
    const short = await accounts('set-feed-token', '--db', db, '--account', 'paris', '--token-file', shortFile);
    expect(short.code).toBe(2);
    expect(short.stderr).toContain(`--token-file (${shortFile}) must be at least 16 characters`);
    for (const args of [[], ['--token-file', tokenFile, '--clear']]) {
      const wrong = await accounts('set-feed-token', '--db', db, '--account', 'paris', ...args);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain('give the token with --token-file (or --token), or --clear, one of them');
    }
    const cleared = await accounts('set-feed-token', '--db', db, '--account', 'paris', '--clear', '--json');
    expect(json(cleared.stdout)).toMatchObject({ hasFeedToken: false });
    const gone = await accounts('set-feed-token', '--db', db, '--account', 'marseille', '--token-file', tokenFile);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('no account "marseille"');
  });

  it('rotate-secret without a secret generates one, printed once, which verifies; a short secret given is warned of', async () => {
    const rotated = await accounts('rotate-secret', '--db', db, '--account', 'nantes', '--keep-previous', '0', '--json');
    expect(rotated.code).toBe(0);
    const body = json(rotated.stdout);
    expect(body.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(body.fingerprint).toBe(
      createHash('sha256')
        .update(body.secret as string)
        .digest('hex')
        .slice(0, 12),
    );
    expect(rotated.stderr).toBe('');
    const fingerprints = await runCli(['secret', '--db', db, '--account', 'nantes']);
    expect(fingerprints.stdout.trim().split('\n')).toEqual([body.fingerprint]);
    const text = await accounts('rotate-secret', '--db', db, '--account', 'nantes', '--keep-previous', '0');
    expect(text.stdout).toMatch(/^its new secret, shown once \(paste it in the account's agency dashboard\): whsec_[0-9a-f]{64}$/m);
    for (const verb of ['add', 'rotate-secret']) {
      const weak = await accounts(verb, '--db', db, '--account', verb === 'add' ? 'short' : 'nantes', '--secret', 'fifteen-bytes!!');
      expect(weak.code).toBe(0);
      expect(weak.stderr).toContain('the secret is shorter than 16 bytes: it can be guessed offline from one signed request');
    }
  });

  it('refuses bad slugs, the default account and unknown accounts with clear errors and exit codes', async () => {
    const bad = await accounts('add', '--db', db, '--account', 'Agence Lyon');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"Agence Lyon" is not an account id');
    const reserved = await accounts('disable', '--db', db, '--account', 'default');
    expect(reserved.code).toBe(2);
    expect(reserved.stderr).toContain('default account');
    const unknown = await accounts('disable', '--db', db, '--account', 'marseille');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no account "marseille"');
    const taken = await accounts('add', '--db', db, '--account', 'paris', '--secret', SECRET);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain('exists already');
    const noVerb = await accounts('frobnicate');
    expect(noVerb.code).toBe(2);
  });

  it('refuses to remove without --erase-data and --reason, saying why', async () => {
    const bare = await accounts('remove', '--db', db, '--account', 'nantes');
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('--erase-data');
    const noReason = await accounts('remove', '--db', db, '--account', 'nantes', '--erase-data');
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toContain('--reason is required');
  });

  it('names the key it expects when given another one', async () => {
    const other = join(tmp.dir, 'other-key');
    writeFileSync(other, `${Buffer.alloc(32, 7).toString('base64')}\n`, { mode: 0o600 });
    const wrong = await accounts(
      'rotate-secret',
      '--db',
      db,
      '--account',
      'paris',
      '--secret',
      `${SECRET}-3`,
      '--accounts-key-file',
      other,
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/encrypted under the accounts key [0-9a-f]{16}, and .*other-key does not hold it/);
  });

  it('rekeys: the key file holds a new key, the previous one is kept aside, and every secret still reads', async () => {
    const before = readFileSync(keyFile, 'utf8');
    const rekeyed = await accounts('rekey', '--db', db, '--json');
    expect(rekeyed.code).toBe(0);
    const { previousKeyId } = json(rekeyed.stdout) as { previousKeyId: string };
    expect(json(rekeyed.stdout)).toMatchObject({ keyFile, previousKeyFile: `${keyFile}.${previousKeyId}` });
    expect(readFileSync(`${keyFile}.${previousKeyId}`, 'utf8')).toBe(before);
    expect(readFileSync(keyFile, 'utf8')).not.toBe(before);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const rotated = await accounts('rotate-secret', '--db', db, '--account', 'paris', '--secret', `${SECRET}-4`, '--keep-previous', '0');
    expect(rotated.code).toBe(0);
  });

  it('rekeys to a key given by --new-key-file (as replicas on several hosts do)', async () => {
    const given = join(tmp.dir, 'given-key');
    const bytes = Buffer.alloc(32, 42);
    writeFileSync(given, `${bytes.toString('hex')}\n`, { mode: 0o600 });
    const rekeyed = await accounts('rekey', '--db', db, '--new-key-file', given, '--json');
    expect(rekeyed.code).toBe(0);
    expect(json(rekeyed.stdout).keyId).toBe(createHash('sha256').update(bytes).digest('hex').slice(0, 16));
    const listed = await accounts('rotate-secret', '--db', db, '--account', 'paris', '--secret', `${SECRET}-5`);
    expect(listed.code).toBe(0);
    const bad = join(tmp.dir, 'bad-key');
    writeFileSync(bad, 'not a key\n');
    const refused = await accounts('rekey', '--db', db, '--new-key-file', bad);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('must hold 32 bytes as base64 (44 characters) or 64 hex digits');
  });

  it('leaves no secret in the database file or its WAL', () => {
    for (const file of readdirSync(tmp.dir).filter((f) => /^hooks\.db(-wal)?$/.test(f))) {
      const bytes = readFileSync(join(tmp.dir, file));
      for (const value of [SECRET, API_KEY, 'cli-accounts-test', 'cli-accounts-test-feed-token'])
        expect(bytes.includes(Buffer.from(value)), `${value} in ${file}`).toBe(false);
    }
  });
});
