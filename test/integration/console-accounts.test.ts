// The console with several accounts, on each engine, over HTTP: every page and action reaches the
// account of its path only, an unknown account is a 404, and the read-only token never sees a
// route key (the secret part of an account's webhook path).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyFile, newKey } from '../../src/accounts/key-file.js';
import { createReceiver, type Receiver } from '../../src/receiver/create-receiver.js';
import { sampleEvent } from '../../src/testing/index.js';
import { crawlConsole } from '../support/console-crawl.js';
import { ENGINES, type EngineUnderTest } from '../support/engines.js';
import { listen, tempDir } from '../support/servers.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures/');
const TOKEN = 'console-accounts-token-5c2e';
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const SHARED_CAMPAIGN = 'cmp_shared_01';
const SHARED_CANDIDATE = 'cand-shared-01';

/** A candidate of the shared ids, with the names one account holds. */
const added = (first: string, last: string, candidate = SHARED_CANDIDATE) =>
  sampleEvent('candidate.added', {
    timestamp: '2026-11-20T10:00:00.000Z',
    data: { campaign_id: SHARED_CAMPAIGN, candidate_id: candidate, first_name: first, last_name: last },
  });

interface Running {
  receiver: Receiver;
  server: { url: string; close: () => Promise<void> };
  /** Route keys of the accounts added, as the registry lists them. */
  routeKeys: string[];
}

/** A receiver whose registry holds `acme` (active) and `brio` (disabled), its console at /ops and read-only at /ro. */
function consoleWithAccounts(engine: EngineUnderTest): Running {
  const running = { routeKeys: [] as string[] } as unknown as Running;
  const cleanups: Array<() => void> = [];
  beforeAll(async () => {
    const fresh = await engine.fresh();
    cleanups.push(fresh.cleanup);
    const keys = tempDir();
    cleanups.push(keys.cleanup);
    const keyFile = join(keys.dir, 'accounts-key');
    if (engine.name === 'postgres') createKeyFile(keyFile, newKey());
    running.receiver = createReceiver({
      database: fresh.database,
      allowUnsigned: true,
      ...(engine.name === 'postgres' && { accounts: { keyFile } }),
    });
    await running.receiver.ready();
    const accounts = (await running.receiver.accounts())!;
    await accounts.add({ account: 'acme', name: 'Acme Intérim', secret: 'whsec_acme_console_1' });
    await accounts.add({ account: 'brio', secret: 'whsec_brio_console_1' });
    await accounts.disable('brio');
    running.routeKeys = (await accounts.list()).filter((a) => a.account !== 'default').map((a) => a.webhookPath.split('/').at(-1)!);
    const app = express();
    app.use('/ops', running.receiver.dashboard({ token: TOKEN }));
    app.use('/ro', running.receiver.dashboard({ token: TOKEN, readOnly: true }));
    running.server = await listen(app as never);
  });
  afterAll(async () => {
    await running.server.close();
    await running.receiver.close();
    for (const cleanup of cleanups) cleanup();
  });
  return running;
}

describe.each(ENGINES)('accounts in the console on $name', (engine) => {
  const running = consoleWithAccounts(engine);
  const unknownKind = JSON.parse(readFileSync(`${FIXTURES}invalid/unknown-kind.json`, 'utf8')) as object;
  beforeAll(async () => {
    const { receiver } = running;
    await receiver.replay([added('Albane', 'Quesnel'), unknownKind]);
    await receiver.forAccount('acme').replay([added('Bérénice', 'Roussel'), added('Côme', 'Sauvage', 'cand-acme-only')]);
    await receiver.drain();
  });

  const get = async (path: string) => {
    const answer = await fetch(`${running.server.url}${path}`, { headers: AUTH });
    return { status: answer.status, type: answer.headers.get('content-type') ?? '', text: await answer.text() };
  };
  const post = (path: string, form: Record<string, string>) =>
    fetch(`${running.server.url}${path}`, {
      method: 'POST',
      headers: { ...AUTH, 'Content-Type': 'application/x-www-form-urlencoded', Origin: running.server.url },
      body: new URLSearchParams(form).toString(),
      redirect: 'manual',
    });
  const csrfOf = (text: string) => /name="_csrf" value="([^"]+)"/.exec(text)![1]!;

  it('shows each account its own rows for the same campaign and candidate ids', async () => {
    const mine = await get(`/ops/candidates/${SHARED_CANDIDATE}?reveal=1`);
    expect(mine.text).toContain('Albane Quesnel');
    expect(mine.text).not.toContain('Roussel');
    const theirs = await get(`/ops/a/acme/candidates/${SHARED_CANDIDATE}?reveal=1`);
    expect(theirs.status).toBe(200);
    expect(theirs.text).toContain('Bérénice Roussel');
    expect(theirs.text).not.toContain('Quesnel');
    // Masked as on the default account's pages.
    expect((await get(`/ops/a/acme/candidates/${SHARED_CANDIDATE}`)).text).toContain('B*** R***');
    expect((await get(`/ro/a/acme/candidates/${SHARED_CANDIDATE}?reveal=1`)).text).not.toContain('Roussel');

    expect((await get(`/ops/campaigns/${SHARED_CAMPAIGN}`)).text).toMatch(/id="stat-total">1</);
    expect((await get(`/ops/a/acme/campaigns/${SHARED_CAMPAIGN}`)).text).toMatch(/id="stat-total">2</);
    expect((await get('/ops/candidates/cand-acme-only')).status).toBe(404);
    expect((await get('/ops/a/brio/campaigns')).text).toContain('No campaign yet.');

    const overview = JSON.parse((await get('/ops/a/acme/api/overview')).text) as { counts: object };
    expect(overview.counts).toEqual(await running.receiver.forAccount('acme').counts());
    const events = JSON.parse((await get('/ops/a/acme/api/events?limit=500')).text) as { events: Array<{ inbox_id: number }> };
    expect(events.events).toHaveLength(2);
    // An inbox id of another account is not found through this one.
    const defaults = JSON.parse((await get('/ops/api/events?limit=500')).text) as { events: Array<{ inbox_id: number }> };
    expect((await get(`/ops/a/acme/events/${defaults.events[0]!.inbox_id}`)).status).toBe(404);
  });

  it('keeps every link and form of an account page in that account, and offers the switcher on every page', async () => {
    const page = await get('/ops/a/acme/campaigns');
    const links = [...page.text.matchAll(/(?:href|action)="(\/ops[^"]*)"/g)].map((m) => m[1]!);
    const outside = links.filter((l) => !l.startsWith('/ops/a/acme/') && !l.startsWith('/ops/assets/'));
    // The switcher's links (to the same page of the other accounts) and the accounts overview are the only ways out.
    expect(outside.sort()).toEqual(['/ops/campaigns', '/ops/a/brio/campaigns', '/ops/accounts', '/ops/accounts'].sort());
    const switcher = /<details class="accounts" id="account-switcher">([\s\S]*?)<\/details>/.exec(page.text)![1]!;
    expect([...switcher.matchAll(/data-account="([^"]+)"/g)].map((m) => m[1])).toEqual(['acme', 'default', 'acme', 'brio']);
    expect(switcher).toMatch(/brio<\/a> <span class="state disabled">disabled</);
    for (const path of ['/ops/', '/ops/events', '/ro/a/brio/dead-letters', '/ops/accounts', '/ro/erasures'])
      expect((await get(path)).text, path).toContain('id="account-switcher"');
  });

  it('answers 404 for an account that is not registered or not an id, never 500', async () => {
    for (const path of ['/ops/a/nobody/', '/ops/a/nobody/events', '/ops/a/Not%20An%20Id/campaigns', '/ro/a/%3Cscript%3E/', '/ops/a/-x/']) {
      const answer = await get(path);
      expect(answer.status, path).toBe(404);
      expect(answer.text).toContain('id="unknown-account"');
      expect(answer.text).not.toContain('<script>');
    }
    const api = await get('/ops/a/nobody/api/overview');
    expect(api.status).toBe(404);
    expect(JSON.parse(api.text)).toMatchObject({ error: { code: 'UNKNOWN_ACCOUNT' } });
    const csrf = csrfOf((await get(`/ops/candidates/${SHARED_CANDIDATE}/erase`)).text);
    expect(
      (await post(`/ops/a/nobody/candidates/${SHARED_CANDIDATE}/erase`, { _csrf: csrf, reason: 'x', confirm: SHARED_CANDIDATE })).status,
    ).toBe(404);
  });

  it("acts on the form's account only: another account's token, path or inbox id changes nothing there", async () => {
    const before = await running.receiver.counts();
    // The default account's unknown event, asked to be reprocessed through acme's pages: skipped.
    const defaults = JSON.parse((await get('/ops/api/events?state=unknown')).text) as { events: Array<{ inbox_id: number }> };
    const id = defaults.events[0]!.inbox_id;
    const acmeToken = csrfOf((await get(`/ops/a/acme/candidates/${SHARED_CANDIDATE}/erase`)).text);
    const reprocessed = await post(`/ops/a/acme/dead-letters/${id}/reprocess`, { _csrf: acmeToken });
    expect(reprocessed.status).toBe(303);
    expect(reprocessed.headers.get('location')).toBe('/ops/a/acme/dead-letters?requeued=0&skipped=1');

    // Acme's form token does not act on the default account (nor the default's on acme).
    const defaultToken = csrfOf((await get(`/ops/candidates/${SHARED_CANDIDATE}/erase`)).text);
    expect(defaultToken).not.toBe(acmeToken);
    const crossed = { reason: 'asked', confirm: SHARED_CANDIDATE };
    expect((await post(`/ops/candidates/${SHARED_CANDIDATE}/erase`, { ...crossed, _csrf: acmeToken })).status).toBe(403);
    expect((await post(`/ops/a/acme/candidates/${SHARED_CANDIDATE}/erase`, { ...crossed, _csrf: defaultToken })).status).toBe(403);
    expect((await get(`/ops/candidates/${SHARED_CANDIDATE}`)).status).toBe(200);

    // Erased in acme: the default account's candidate of the same id stays, its audit trail empty.
    const erased = await post(`/ops/a/acme/candidates/${SHARED_CANDIDATE}/erase`, { ...crossed, _csrf: acmeToken });
    expect(erased.status).toBe(303);
    expect(erased.headers.get('location')).toBe(`/ops/a/acme/erasures?erased=${SHARED_CANDIDATE}&redacted=1`);
    expect((await get(`/ops/a/acme/candidates/${SHARED_CANDIDATE}`)).status).toBe(404);
    expect((await get(`/ops/candidates/${SHARED_CANDIDATE}?reveal=1`)).text).toContain('Albane Quesnel');
    expect((await get('/ops/a/acme/erasures')).text).toContain(`<code>${SHARED_CANDIDATE}</code>`);
    expect((await get('/ops/erasures')).text).toContain('No erasure yet.');
    expect(await running.receiver.counts()).toEqual(before);
    const exported = JSON.parse((await get(`/ops/a/acme/candidates/cand-acme-only/export`)).text) as { candidate: { first_name: string } };
    expect(exported.candidate.first_name).toBe('Côme');
  });

  it('lists every account with its counts; webhook paths only to the full token, and never in a URL', async () => {
    const overview = await get('/ops/accounts');
    expect([...overview.text.matchAll(/<tr data-account="([^"]+)"/g)].map((m) => m[1])).toEqual(['default', 'acme', 'brio']);
    const api = JSON.parse((await get('/ops/api/accounts')).text) as {
      accounts: Array<{ account: string; state: string; webhookPath?: string; counts: Record<string, number> }>;
    };
    for (const row of api.accounts) {
      const { pending, projected, unknown, dead, handler_failures } = await running.receiver.forAccount(row.account).counts();
      expect(row.counts).toEqual({ pending, projected, unknown, dead, handler_failures });
    }
    expect(api.accounts.map((a) => a.state)).toEqual(['active', 'active', 'disabled']);
    for (const key of running.routeKeys) {
      expect(overview.text).toContain(`<code class="webhook-path">/webhooks/${key}</code>`);
      for (const [, href] of overview.text.matchAll(/(?:href|action|src)="([^"]*)"/g)) expect(href).not.toContain(key);
    }

    const readOnly = await crawlConsole({ base: `${running.server.url}/ro`, authorization: AUTH.Authorization });
    expect(readOnly.some((a) => a.path === '/a/acme/campaigns' && a.status === 200)).toBe(true);
    expect(readOnly.some((a) => a.path === '/a/brio/api/overview' && a.status === 200)).toBe(true);
    expect(readOnly.some((a) => a.path === '/accounts' && a.status === 200)).toBe(true);
    const shown = readOnly.filter((a) => running.routeKeys.some((key) => a.text.includes(key))).map((a) => a.path);
    expect(shown).toEqual([]);
    expect(readOnly.filter((a) => a.status >= 500)).toEqual([]);
    const full = await crawlConsole({
      base: `${running.server.url}/ops`,
      authorization: AUTH.Authorization,
      skip: (p) => p.endsWith('/export'),
    });
    expect(full.filter((a) => a.status >= 500)).toEqual([]);
    expect(
      full
        .filter((a) => running.routeKeys.some((key) => a.text.includes(key)))
        .map((a) => a.path)
        .sort(),
    ).toEqual(['/accounts', '/api/accounts']);
  });

  it('renders the overview of 50 accounts in well under a second', async () => {
    const accounts = (await running.receiver.accounts())!;
    for (let i = 0; i < 47; i++)
      await accounts.add({ account: `agency-${String(i).padStart(2, '0')}`, secret: `whsec_agency_${i}_console` });
    await running.receiver.forAccount('agency-07').replay([added('Dorian', 'Tessier')]);
    await running.receiver.drain();
    const started = performance.now();
    const page = await get('/ops/accounts');
    const elapsed = performance.now() - started;
    expect(page.text.match(/<tr data-account=/g)).toHaveLength(50);
    expect(page.text).toMatch(/<tr data-account="agency-07">[\s\S]*?data-state="projected"><a [^>]*>1</);
    expect(elapsed).toBeLessThan(500);
  });
});
