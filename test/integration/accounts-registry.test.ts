// The accounts registry (docs/accounts.md) on every engine: secrets sealed at rest under a key kept
// outside the database, a wrong key named, rotation's overlap and its end, disable and enable,
// removal with the account's rows, rekey and a crash between its steps, route keys, and feed
// tokens kept as their digest.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, readdirSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AccountsKeyError, openAccounts, watchAccounts, type AccountsOptions } from '../../src/index.js';
import { open } from '../../src/accounts/cipher.js';
import { createKeyFile, newKey, readKeyFile } from '../../src/accounts/key-file.js';
import { watchFeedTokens, type FeedTokens } from '../../src/accounts/feed-tokens.js';
import { openDestinations } from '../../src/destinations/registry.js';
import { copyDatabaseFile } from '../../src/store/sqlite/backup.js';
import { openStore } from '../../src/store/open.js';
import { ENGINES, type EngineUnderTest } from '../support/engines.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';
import { readEnvelope } from '../../src/events/index.js';
import { deliveryOf } from '../../src/receive/delivery.js';
import { sampleEvent } from '../../src/testing/index.js';
import { destinationsOf } from '../../src/destinations/sql.js';

const SECRET = 'whsec_registry-test-secret-4f1d9a7c2e';
const API_KEY = 'pk_live_registry-test-api-key-88c1d2';
const HOUR = 60 * 60 * 1000;

describe.each(ENGINES)('the accounts registry on $name', (engine: EngineUnderTest) => {
  const closing: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  /** A fresh database, a store on it, and the registry's options: the key beside it (SQLite) or given (PostgreSQL). */
  async function fresh(clock?: { now: number }) {
    const { database, cleanup } = await engine.fresh();
    const keys = tempDir('prequal-hooks-keys-');
    const store = await openStore(database);
    closing.push(cleanup, keys.cleanup, () => store.close());
    const keyFile = engine.name === 'sqlite' ? `${database}.accounts-key` : join(keys.dir, 'accounts-key');
    if (engine.name === 'postgres') createKeyFile(keyFile, newKey());
    const notices: string[] = [];
    const options: AccountsOptions = {
      ...(engine.name === 'sqlite' ? { databaseFile: database } : { keyFile }),
      onNotice: (m) => notices.push(m),
      removalSettleMs: 0,
      ...(clock && { now: () => clock.now }),
    };
    return { database, store, keyFile, options, notices, accounts: openAccounts(store, options) };
  }

  it('adds an account behind an opaque path, and lists it without a secret', async () => {
    const { accounts, notices, keyFile } = await fresh();
    const added = await accounts.add({ account: 'agence-lyon', name: 'Agence de Lyon', secret: SECRET });
    expect(added).toMatchObject({ account: 'agence-lyon', name: 'Agence de Lyon', state: 'active', secrets: 1 });
    expect(added.secret).toBeUndefined();
    expect(added.webhookPath).toMatch(/^\/webhooks\/[A-Za-z0-9_-]{32}$/);
    expect(added.webhookPath).not.toContain('lyon');
    const listed = await accounts.list();
    expect(listed.map((a) => a.account)).toEqual(['default', 'agence-lyon']);
    expect(listed[0]).toMatchObject({ account: 'default', webhookPath: '/webhooks' });
    expect(JSON.stringify(listed)).not.toContain(SECRET);
    const routes = await accounts.routes();
    expect(routes.route(added.webhookPath.slice('/webhooks/'.length))).toEqual({
      account: 'agence-lyon',
      state: 'active',
      secrets: [SECRET],
    });
    expect(routes.route('agence-lyon')).toBeUndefined();
    if (engine.name === 'sqlite') {
      expect(notices.join('\n')).toContain(`generated the accounts key at ${keyFile}; back it up apart from the database`);
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    }
  });

  it('generates a secret when none is given, and returns it once', async () => {
    const { accounts } = await fresh();
    const added = await accounts.add({ account: 'nantes' });
    expect(added.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    const [route] = [(await accounts.routes()).route(added.webhookPath.slice(10))];
    expect(route?.secrets).toEqual([added.secret]);
    expect(JSON.stringify(await accounts.list())).not.toContain(added.secret!);
  });

  it('refuses bad ids, the default account, a taken id and unknown accounts', async () => {
    const { accounts } = await fresh();
    await expect(accounts.add({ account: 'Agence Lyon' })).rejects.toThrow(/not an account id/);
    await expect(accounts.add({ account: 'default' })).rejects.toThrow(/default account/);
    await accounts.add({ account: 'lyon', secret: SECRET });
    await expect(accounts.add({ account: 'lyon' })).rejects.toThrow(/exists already/);
    await expect(accounts.disable('paris')).rejects.toThrow(/no account "paris"/);
    await expect(accounts.rotateSecret('paris', { secret: 'x' })).rejects.toThrow(/no account "paris"/);
  });

  it('makes route keys unguessable and unique', async () => {
    const { accounts } = await fresh();
    const paths = new Set<string>();
    for (let i = 0; i < 20; i++) paths.add((await accounts.add({ account: `a${i}`, secret: SECRET })).webhookPath);
    expect(paths.size).toBe(20);
    for (const path of paths) expect(Buffer.from(path.slice(10), 'base64url')).toHaveLength(24);
  });

  it('never stores a secret or an API key in clear (the database file, its WAL, a backup)', async () => {
    const { accounts, database, store } = await fresh();
    await accounts.add({ account: 'lyon', secret: SECRET, apiKey: API_KEY });
    await accounts.rotateSecret('lyon', { secret: `${SECRET}-2` });
    expect(await accounts.apiKey('lyon')).toBe(API_KEY);
    if (engine.name !== 'sqlite') return;
    await store.flush();
    const dir = join(database, '..');
    const files = readdirSync(dir).filter((f) => f.startsWith('hooks.db') && !f.endsWith('.accounts-key'));
    const backup = join(dir, 'copy.db');
    copyDatabaseFile(database, backup);
    for (const file of [...files, 'copy.db']) {
      const bytes = readFileSync(join(dir, file));
      for (const value of [SECRET, API_KEY, 'registry-test']) expect(bytes.includes(Buffer.from(value)), `${value} in ${file}`).toBe(false);
    }
  });

  it('names the key it expects when given the wrong one, and never crashes', async () => {
    const { accounts, store, options } = await fresh();
    await accounts.add({ account: 'lyon', secret: SECRET, apiKey: API_KEY });
    const { keyId } = await store.registry.version();
    const other = join(tempDir('prequal-hooks-other-').dir, 'wrong-key');
    createKeyFile(other, newKey());
    const wrong = openAccounts(store, { ...options, keyFile: other });
    await expect(wrong.routes()).rejects.toThrow(AccountsKeyError);
    await expect(wrong.routes()).rejects.toThrow(new RegExp(`encrypted under the accounts key ${keyId!}`));
    await expect(wrong.apiKey('lyon')).rejects.toThrow(AccountsKeyError);
    await expect(wrong.add({ account: 'paris' })).rejects.toThrow(AccountsKeyError);
    expect((await wrong.list()).map((a) => a.account)).toEqual(['default', 'lyon']);
  });

  it('keeps the previous secret verifying for the overlap, then not', async () => {
    const clock = { now: Date.parse('2026-11-20T10:00:00.000Z') };
    const { accounts } = await fresh(clock);
    const { webhookPath } = await accounts.add({ account: 'lyon', secret: SECRET });
    const key = webhookPath.slice(10);
    const rotated = await accounts.rotateSecret('lyon', { secret: 'new-secret', keepPreviousMs: 2 * HOUR });
    expect(rotated.previousSecretUntil).toBe('2026-11-20T12:00:00.000Z');
    const during = await accounts.routes();
    expect(during.route(key)?.secrets).toEqual(['new-secret', SECRET]);
    expect(during.refreshAt).toBe(clock.now + 2 * HOUR);
    expect((await accounts.list())[1]).toMatchObject({ secrets: 2, previousSecretUntil: '2026-11-20T12:00:00.000Z' });
    clock.now += 2 * HOUR;
    expect((await accounts.routes()).route(key)?.secrets).toEqual(['new-secret']);
    expect((await accounts.list())[1]).toMatchObject({ secrets: 1, previousSecretUntil: null });
    await accounts.rotateSecret('lyon', { secret: 'third', keepPreviousMs: 0 });
    expect((await accounts.routes()).route(key)?.secrets).toEqual(['third']);
  });

  it('disables and enables an account, each change moving the stamp', async () => {
    const { accounts } = await fresh();
    const { webhookPath } = await accounts.add({ account: 'lyon', secret: SECRET });
    const v0 = await accounts.version();
    expect((await accounts.disable('lyon')).state).toBe('disabled');
    expect((await accounts.routes()).route(webhookPath.slice(10))?.state).toBe('disabled');
    const v1 = await accounts.version();
    expect(v1).toBeGreaterThan(v0);
    expect((await accounts.enable('lyon')).state).toBe('active');
    expect(await accounts.version()).toBeGreaterThan(v1);
  });

  it('sets and clears an API key', async () => {
    const { accounts } = await fresh();
    await accounts.add({ account: 'lyon', secret: SECRET });
    expect(await accounts.apiKey('lyon')).toBeUndefined();
    expect((await accounts.setApiKey('lyon', API_KEY)).hasApiKey).toBe(true);
    expect(await accounts.apiKey('lyon')).toBe(API_KEY);
    expect((await accounts.setApiKey('lyon', null)).hasApiKey).toBe(false);
    expect(await accounts.apiKey('lyon')).toBeUndefined();
  });

  it("keeps an account's feed token as its SHA-256 only, the stamp moved; one short or another account's is refused; rekey keeps it, clear and remove take it", async () => {
    const { accounts, store } = await fresh();
    const token = 'feed-token-registry-lyon-3c9d1e';
    const digest = createHash('sha256').update(token).digest('hex');
    await accounts.add({ account: 'lyon', secret: SECRET });
    await accounts.add({ account: 'paris', secret: SECRET });
    const seen: FeedTokens[] = [];
    const stop = await watchFeedTokens(store.registry, { everyMs: 20, onChange: (tokens) => seen.push(tokens), onError: () => undefined });
    closing.push(stop);
    expect(seen).toMatchObject([{ tokens: [] }]);

    const before = await accounts.version();
    expect(await accounts.setFeedToken('lyon', token)).toMatchObject({ account: 'lyon', hasFeedToken: true });
    expect(await accounts.version()).toBeGreaterThan(before);
    const rows = (await store.registry.snapshot()).accounts;
    expect(rows.map((a) => [a.account, a.feed_token_sha256])).toEqual([
      ['lyon', digest],
      ['paris', null],
    ]);
    expect(JSON.stringify(rows)).not.toContain(token);
    expect((await accounts.list()).map((a) => [a.account, a.hasFeedToken])).toEqual([
      ['default', false],
      ['lyon', true],
      ['paris', false],
    ]);
    const heard = await waitFor(() => seen.at(-1)?.tokens[0], 2000, 'the watcher to read the token');
    expect([heard.account, heard.digest.toString('hex')]).toEqual(['lyon', digest]);

    await expect(accounts.setFeedToken('paris', 'fifteen-chars!!')).rejects.toThrow(/at least 16/);
    await expect(accounts.setFeedToken('paris', token)).rejects.toThrow(/another account's/);
    await expect(accounts.setFeedToken('nobody', `${token}-2`)).rejects.toThrow(/no account "nobody"/);
    await accounts.rekey();
    expect((await store.registry.snapshot()).accounts.find((a) => a.account === 'lyon')?.feed_token_sha256).toBe(digest);
    expect((await accounts.setFeedToken('lyon', null)).hasFeedToken).toBe(false);
    await accounts.setFeedToken('paris', token);
    await accounts.remove('paris', { reason: 'contract ended' });
    expect((await store.registry.snapshot()).accounts.flatMap((a) => (a.feed_token_sha256 === null ? [] : [a.account]))).toEqual([]);
    const last = await accounts.version();
    expect((await waitFor(() => (seen.at(-1)?.version === last ? seen.at(-1) : undefined), 2000, 'the removal read')).tokens).toEqual([]);
  });

  it('removes an account with its rows, keeps the others, and an audit line without a secret', async () => {
    const { accounts, store, database } = await fresh();
    await accounts.add({ account: 'lyon', secret: SECRET });
    await accounts.add({ account: 'paris', secret: SECRET });
    const body = (account: string) =>
      new TextEncoder().encode(JSON.stringify(sampleEvent('campaign.created', { data: { campaign_id: `cmp-removed-${account}` } })));
    const stored = await store.append(
      ['lyon', 'paris'].map((account) => deliveryOf(account, body(account), readEnvelope(body(account)), '2026-11-20T10:00:00.000Z', 'fp')),
    );
    const removed = await accounts.remove('lyon', { reason: 'contract ended' });
    expect(removed).toMatchObject({ account: 'lyon', inboxRows: 1 });
    expect(await store.inboxRow(stored[0]!.inboxId!)).toBeUndefined();
    expect((await store.inboxRow(stored[1]!.inboxId!))?.account).toBe('paris');
    expect((await accounts.list()).map((a) => a.account)).toEqual(['default', 'paris']);
    expect(await store.registry.removals()).toEqual([
      { account: 'lyon', removed_at: removed.removedAt, reason: 'contract ended', inbox_rows: 1 },
    ]);
    expect((await store.registry.snapshot()).secrets.map((s) => s.account)).toEqual(['paris']);
    await expect(accounts.remove('lyon', { reason: 'again' })).rejects.toThrow(/no account "lyon"/);
    if (engine.name === 'sqlite') expect(readFileSync(database).includes(Buffer.from('cmp-removed-lyon'))).toBe(false);
  });

  it('rekeys every value under a new key, destinations too, and the key file then holds it', async () => {
    const { accounts, store, keyFile, options } = await fresh();
    const { webhookPath } = await accounts.add({ account: 'lyon', secret: SECRET, apiKey: API_KEY });
    const hook = 'https://user:Pa55@ats.example/hook';
    const added = await openDestinations(store, options).add({ account: 'lyon', url: hook });
    const before = (await store.registry.version()).keyId;
    const rekeyed = await accounts.rekey();
    expect(rekeyed).toMatchObject({ previousKeyId: before, keyFile, values: 3 });
    const destination = (await destinationsOf(store).get({ account: 'lyon', destination: added.destination }))!;
    expect(destination.key_id).toBe(rekeyed.keyId);
    expect(rekeyed.keyId).not.toBe(before);
    expect((await store.registry.snapshot()).secrets.every((s) => s.key_id === rekeyed.keyId)).toBe(true);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(existsSync(`${keyFile}.next`)).toBe(false);
    // A process that knows only the key file (the previous one moved aside) reads every value.
    renameSync(`${keyFile}.${before!}`, `${keyFile}.old`);
    const later = openAccounts(store, options);
    expect((await later.routes()).route(webhookPath.slice(10))?.secrets).toEqual([SECRET]);
    expect(await later.apiKey('lyon')).toBe(API_KEY);
    expect(openDestinations(store, options).open(destination)).toEqual({ url: hook, secrets: [added.secret] });
  });

  it('keeps each key a rekey replaced under its id, owner-only, and each opens what a backup made before it holds', async () => {
    const { accounts, store, keyFile, options, database } = await fresh();
    const { webhookPath } = await accounts.add({ account: 'lyon', secret: SECRET });
    const backups: Array<{ keyId: string; snapshot: Awaited<ReturnType<typeof store.registry.snapshot>>; file?: string }> = [];
    for (const round of [1, 2]) {
      // What a backup made now holds of the registry (on SQLite, a backup file too).
      const snapshot = await store.registry.snapshot();
      const file = engine.name === 'sqlite' ? join(database, '..', `backup-${round}.db`) : undefined;
      if (file !== undefined) copyDatabaseFile(database, file);
      const rekeyed = await accounts.rekey();
      expect(rekeyed.previousKeyId).toBe(snapshot.keyId);
      expect(rekeyed.previousKeyFile).toBe(`${keyFile}.${snapshot.keyId!}`);
      backups.push({ keyId: snapshot.keyId!, snapshot, ...(file !== undefined && { file }) });
    }
    expect(new Set(backups.map((b) => b.keyId)).size).toBe(2);
    for (const { keyId, snapshot, file } of backups) {
      const retired = `${keyFile}.${keyId}`;
      expect(statSync(retired).mode & 0o777).toBe(0o600);
      const key = readKeyFile(retired)!;
      expect(key.id).toBe(keyId);
      expect(snapshot.secrets.map((s) => open(key, s.account, 'secret', s.ciphertext))).toEqual([SECRET]);
      if (file === undefined) continue;
      // The backup restored beside the key file opens: its key is found among the retired ones by its id.
      const restored = await openStore(file);
      closing.push(() => restored.close());
      expect(
        (await openAccounts(restored, { ...options, databaseFile: file, keyFile }).routes()).route(webhookPath.slice(10))?.secrets,
      ).toEqual([SECRET]);
    }
  });

  it('survives a crash between the steps of a rekey', async () => {
    const { accounts, store, keyFile, options } = await fresh();
    const { webhookPath } = await accounts.add({ account: 'lyon', secret: SECRET });
    const key = webhookPath.slice(10);
    // Crashed after writing the new key, before the re-encryption committed: the old key still reads.
    createKeyFile(`${keyFile}.next`, newKey());
    expect((await openAccounts(store, options).routes()).route(key)?.secrets).toEqual([SECRET]);
    // Rekey again: it takes up the new key, commits, swaps.
    const next = await openAccounts(store, options).rekey();
    expect(next.keyId).toBe(readKeyFile(keyFile)!.id);
    // Crashed after the commit, before the files were swapped: undo the swap by hand.
    const third = await openAccounts(store, options).rekey();
    renameSync(keyFile, `${keyFile}.next`);
    copyFileSync(third.previousKeyFile!, keyFile);
    const reopened = openAccounts(store, options);
    expect((await reopened.routes()).route(key)?.secrets).toEqual([SECRET]);
    // ... and opening it finished the swap.
    expect(readKeyFile(keyFile)!.id).toBe(third.keyId);
    expect(existsSync(`${keyFile}.next`)).toBe(false);
  });

  it('asks for the key file where none may be generated (PostgreSQL), and finishes a rekey cut between its renames', async () => {
    const { store, keyFile, options, accounts } = await fresh();
    const bare = openAccounts(store, {});
    await expect(bare.add({ account: 'lyon', secret: SECRET })).rejects.toThrow(/needs its key file: give --accounts-key-file/);
    const { webhookPath } = await accounts.add({ account: 'lyon', secret: SECRET });
    const rekeyed = await accounts.rekey();
    // Cut with no key file and the new key in .next (0.4.0's rekey renamed the key file away first).
    renameSync(keyFile, `${keyFile}.next`);
    expect((await openAccounts(store, options).routes()).route(webhookPath.slice(10))?.secrets).toEqual([SECRET]);
    expect(readKeyFile(keyFile)!.id).toBe(rekeyed.keyId);
  });

  it('shows a change made through another connection to a watcher within 2 s', async () => {
    const { database, accounts, options } = await fresh();
    const other = await openStore(database);
    closing.push(() => other.close());
    const replica = openAccounts(other, options);
    const seen: number[] = [];
    const stop = watchAccounts(replica, { onChange: (r) => seen.push(r.size) });
    try {
      await waitFor(() => seen.length === 1, 3000, "the watcher's first routes");
      const started = Date.now();
      await accounts.add({ account: 'lyon', secret: SECRET });
      await waitFor(() => seen.at(-1) === 1, 2000, 'the added account, seen through the other connection');
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      stop();
    }
  });

  it('makes one key when two connections add the first accounts at once', async () => {
    const { database, accounts, options, store } = await fresh();
    const other = await openStore(database);
    closing.push(() => other.close());
    await Promise.all([
      accounts.add({ account: 'lyon', secret: SECRET }),
      openAccounts(other, options).add({ account: 'paris', secret: SECRET }),
    ]);
    const { secrets, keyId } = await store.registry.snapshot();
    expect(secrets.map((s) => s.key_id)).toEqual([keyId, keyId]);
    expect((await accounts.routes()).size).toBe(2);
  });

  it('gives a watcher new routes when a previous secret expires, without a change to the registry', async () => {
    const clock = { now: Date.parse('2026-11-20T10:00:00.000Z') };
    const { accounts } = await fresh(clock);
    const key = (await accounts.add({ account: 'lyon', secret: SECRET })).webhookPath.slice(10);
    await accounts.rotateSecret('lyon', { secret: 'new-secret', keepPreviousMs: HOUR });
    const seen: number[] = [];
    const stop = watchAccounts(accounts, {
      everyMs: 20,
      now: () => clock.now,
      onChange: (r) => seen.push(r.route(key)!.secrets.length),
    });
    try {
      await waitFor(() => seen.length === 1, 3000, "the watcher's first routes");
      expect(seen).toEqual([2]);
      clock.now += HOUR;
      await waitFor(() => seen.length === 2, 3000, 'the routes without the expired secret');
      expect(seen).toEqual([2, 1]);
    } finally {
      stop();
    }
  });

  it('retries a watcher whose first poll fails at its pace, not in a tight loop', async () => {
    const errors: unknown[] = [];
    const down = { version: () => Promise.reject(new Error('down')), routes: () => Promise.reject(new Error('down')) };
    vi.useFakeTimers();
    try {
      const stop = watchAccounts(down, { everyMs: 50, onChange: () => undefined, onError: (e) => errors.push(e) });
      // 180 ms of the watcher's clock: the first poll, then one every 50 ms.
      await vi.advanceTimersByTimeAsync(180);
      stop();
    } finally {
      vi.useRealTimers();
    }
    expect(errors).toHaveLength(4);
  });

  it('reports changes to a watcher within its poll, and keeps the last routes when a poll fails', async () => {
    const { accounts } = await fresh();
    const seen: number[] = [];
    const errors: number[] = [];
    let failing = false;
    const source = {
      version: () => (failing ? Promise.reject(new Error('down')) : accounts.version()),
      routes: () => accounts.routes(),
    };
    const stop = watchAccounts(source, { everyMs: 20, onChange: (r) => seen.push(r.size), onError: () => errors.push(performance.now()) });
    try {
      await waitFor(() => seen.length === 1, 3000, "the watcher's first routes");
      await accounts.add({ account: 'lyon', secret: SECRET });
      await waitFor(() => seen.at(-1) === 1, 3000, 'the added account');
      failing = true;
      await waitFor(() => errors.length >= 3, 3000, 'three failed polls');
      // Retried at its pace (every 20 ms), not in a tight loop.
      const gaps = errors.slice(1, 3).map((at, i) => at - errors[i]!);
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(15);
      failing = false;
      await accounts.add({ account: 'paris', secret: SECRET });
      await waitFor(() => seen.at(-1) === 2, 3000, 'the second account after the failures');
    } finally {
      stop();
    }
    expect(seen).toEqual([0, 1, 2]);
  });
});
