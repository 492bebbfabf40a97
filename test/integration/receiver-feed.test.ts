// `receiver.feed()` mounted in an application's Express app (docs/changes.md): GET <mount>/changes
// answers as `serve`'s GET /changes does (test/e2e/serve-changes.test.ts), in this process: the
// same tokens (the feed token, the dashboard token, an account's own), pages, server-sent events,
// 400, 401, 403, 404, 409 and 410, and its live streams ended by the receiver's close. On both engines.
import { join } from 'node:path';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createKeyFile, newKey } from '../../src/accounts/key-file.js';
import { ConfigurationError } from '../../src/index.js';
import { createReceiver, type Receiver } from '../../src/receiver/create-receiver.js';
import { storePorts } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/index.js';
import { ENGINES } from '../support/engines.js';
import { listen, tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';
import { serverSentChanges, type WireChange } from '../support/server-sent-events.js';

const FEED = 'feed-token-mounted-5c2e9a';
const FULL = 'dashboard-token-mounted-8f1b';
const ACME = 'acme-feed-token-mounted-3d7c';
const CAMPAIGN = 'cmp_mounted';

const as = (token: string, extra: Record<string, string> = {}) => ({ Authorization: `Bearer ${token}`, ...extra });
const candidate = (id: string) => sampleEvent('candidate.added', { data: { campaign_id: CAMPAIGN, candidate_id: id } });

describe.each(ENGINES)('receiver.feed() mounted in an Express app, on $name', (engine) => {
  const closing: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  /** A receiver with five changes of the default account, its feed at /feed of an app of its own. */
  async function mounted(feedOptions: Parameters<Receiver['feed']>[0] = { token: FEED, dashboardToken: FULL }) {
    const { database, cleanup } = await engine.fresh();
    const keys = tempDir('prequal-hooks-keys-');
    const keyFile = join(keys.dir, 'accounts-key');
    createKeyFile(keyFile, newKey());
    closing.push(cleanup, keys.cleanup);
    const receiver = createReceiver({ database, secret: 'whsec_mounted-feed-test-1f4a', accounts: { keyFile, everyMs: 50 } });
    let closed = false;
    closing.push(() => (closed ? undefined : receiver.close()));
    await receiver.ready();
    await receiver.replay([1, 2, 3, 4].map((i) => candidate(`cand-${i}`)));
    const app = express();
    app.use('/feed', receiver.feed(feedOptions));
    const server = await listen(app);
    closing.push(server.close);
    const get = async (path: string, headers: Record<string, string> = {}) => {
      const answer = await fetch(`${server.url}${path}`, { headers });
      const text = await answer.text();
      return { status: answer.status, text, body: (text.startsWith('{') ? JSON.parse(text) : {}) as Record<string, unknown> };
    };
    const close = async () => {
      closed = true;
      await receiver.close();
    };
    return { receiver, url: server.url, get, close, database };
  }

  it('opens to the feed token and the dashboard token; 401 without a token of its own, 403 for an account token asking another account', async () => {
    const { receiver, get } = await mounted();
    await (await receiver.accounts())!.add({ account: 'acme', secret: 'whsec_mounted-feed-acme-6b2d' });
    await receiver.forAccount('acme').replay([candidate('cand-acme')]);
    await (await receiver.accounts())!.setFeedToken('acme', ACME);

    expect((await get('/feed/changes', as(FEED))).status).toBe(200);
    expect((await get('/feed/changes', as(FULL))).status).toBe(200);
    const none = await get('/feed/changes');
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    expect((await get('/feed/changes', as('not-a-token-of-ours-0000'))).status).toBe(401);
    // An account's own token, taken up from the registry within two seconds, opens its feed only.
    const acme = await waitFor(
      async () => {
        const answer = await get('/feed/changes?account=acme', as(ACME));
        return answer.status === 200 ? answer : undefined;
      },
      5000,
      "acme's feed token taken up",
    );
    expect((acme.body as { changes: WireChange[] }).changes.map((c) => c.id)).toEqual([CAMPAIGN, 'cand-acme']);
    const other = await get('/feed/changes', as(ACME));
    expect(other.status).toBe(403);
    expect(other.body).toMatchObject({ error: { code: 'FORBIDDEN' } });
    expect(JSON.stringify(other.body)).toContain('GET /feed/changes?account=acme');
  });

  it('pages in seq order as serve does: next, 400 for a bad parameter, 404 for an unknown account, 409 past the head', async () => {
    const { get } = await mounted();
    const all = await get('/feed/changes', as(FEED));
    expect(all.status).toBe(200);
    const page = all.body as { changes: WireChange[]; next: number };
    expect(page.changes.map((c) => c.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(page.changes[1]).toMatchObject({ entity: 'candidate', id: 'cand-1', op: 'upsert' });
    expect(page.next).toBe(5);
    expect((await get('/feed/changes?after=2&limit=2', as(FEED))).body).toMatchObject({ next: 4 });
    expect((await get('/feed/changes?after=5', as(FEED))).body).toEqual({ changes: [], next: 5 });
    for (const query of ['?after=-1', '?after=abc', '?limit=0', '?limit=1001', '?account=Not%20An%20Id']) {
      const answer = await get(`/feed/changes${query}`, as(FEED));
      expect([answer.status, (answer.body.error as { code: string }).code], query).toEqual([400, 'VALIDATION_ERROR']);
    }
    const unknown = await get('/feed/changes?account=nobody', as(FEED));
    expect([unknown.status, (unknown.body.error as { code: string }).code]).toEqual([404, 'RESOURCE_NOT_FOUND']);
    const ahead = await get('/feed/changes?after=9', as(FEED));
    expect(ahead.status).toBe(409);
    expect(ahead.body).toMatchObject({ error: { code: 'CURSOR_AHEAD', details: { after: 9, head: 5 } }, head: 5 });
  });

  it('answers 410 with the oldest kept once retention dropped changes after the cursor', async () => {
    const { receiver, get } = await mounted();
    expect(await storePorts(await receiver.store()).pruneChanges('2999-01-01T00:00:00.000Z', 3)).toBe(3);
    const dropped = await get('/feed/changes?after=1', as(FEED));
    expect(dropped.status).toBe(410);
    expect(dropped.body).toMatchObject({ error: { code: 'CHANGES_DROPPED' }, oldest: 4 });
    expect((await get('/feed/changes?after=3', as(FEED))).status).toBe(200);
  });

  it('streams after Last-Event-ID, follows a later change, and ends the stream when the receiver closes', async () => {
    const { receiver, url, close } = await mounted();
    const answer = await fetch(`${url}/feed/changes`, { headers: as(FEED, { Accept: 'text/event-stream', 'Last-Event-ID': '3' }) });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/event-stream');
    const events = serverSentChanges(answer.body!);
    const first = [(await events.next()).value, (await events.next()).value] as Array<{ id: string; data: WireChange }>;
    expect(first.map((e) => [e.id, e.data.seq])).toEqual([
      ['4', 4],
      ['5', 5],
    ]);
    await receiver.replay([candidate('cand-later')]);
    const later = (await events.next()).value as { data: WireChange };
    expect(later.data).toMatchObject({ seq: 6, id: 'cand-later' });
    await close();
    expect((await events.next()).done).toBe(true);
  });

  it('leaves the route to the application while no token opens it, and refuses a short token at mount', async () => {
    const { get } = await mounted({});
    const answer = await get('/feed/changes', as(FEED));
    expect(answer.status).toBe(404);
    expect(answer.text).toContain('Cannot GET /feed/changes');
    const { receiver } = await mounted();
    expect(() => receiver.feed({ token: 'short' })).toThrow(ConfigurationError);
    expect(() => receiver.feed({ token: FEED, dashboardToken: FEED })).toThrow(/must differ/);
  });
});
