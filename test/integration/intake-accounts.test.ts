// The adapters route an account's path the same way (docs/accounts.md): Express by its :routeKey
// parameter, node:http and fetch by a path ending /webhooks/<route key>; each verifies with that
// account's secrets only, and handlers are told the account.
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from '../../src/receiver/create-receiver.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { listen, tempDir } from '../support/servers.js';
import { sqlOn } from '../support/sql.js';
import { waitFor } from '../support/wait-for.js';

const DEFAULT_SECRET = 'whsec_adapters_default_51c2';
const ACME_SECRET = 'whsec_adapters_acme_8be0f1';

const event = (title: string) => sampleEvent('campaign.created', { data: { campaign_id: 'camp-adapters', job_title: title } });

async function post(url: string, body: object, secret: string, method = 'POST') {
  const request = signedRequest(body, { secret });
  const response = await fetch(url, { method, headers: request.headers, body: request.body });
  return { status: response.status, body: (await response.json()) as { error?: { code: string }; received?: boolean } };
}

describe('the adapters route accounts by their webhook path', () => {
  const tmp = tempDir('prequal-hooks-adapters-');
  let receiver: Receiver;
  let routeKey: string;
  const servers: Array<{ url: string; close: () => Promise<void> }> = [];
  const told: Array<{ account: string; title: string }> = [];

  beforeAll(async () => {
    receiver = createReceiver({ database: tmp.dbPath, secret: DEFAULT_SECRET, accounts: { everyMs: 100 } });
    receiver.on('campaign.created', (e, context) => void told.push({ account: context.account, title: e.data.job_title ?? '' }));
    const added = await (await receiver.accounts())!.add({ account: 'acme', secret: ACME_SECRET });
    routeKey = added.webhookPath.split('/').at(-1)!;
    const app = express();
    app.post('/webhooks', receiver.middleware());
    app.post('/webhooks/:routeKey', receiver.middleware());
    servers.push(await listen(app as never), await listen(receiver.nodeHandler()));
    const fetchHandler = receiver.fetchHandler();
    servers.push(await listen((req, res) => void viaFetch(fetchHandler, req, res)));
    // Taken up by the receiver's poll of the registry.
    await waitFor(
      async () => (await post(`${servers[1]!.url}/webhooks/${routeKey}`, event('warm-up'), ACME_SECRET)).status === 200,
      3000,
      'the account to be routed',
      { everyMs: 50 },
    );
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await receiver.close();
    tmp.cleanup();
  });

  it.each([
    ['Express', 0],
    ['node:http', 1],
    ['fetch', 2],
  ])('%s: the account path takes its own secret only, /webhooks the default one, an unknown key is 404', async (_name, index) => {
    const base = servers[index]!.url;
    expect((await post(`${base}/webhooks/${routeKey}`, event(`acme ${index}`), ACME_SECRET)).status).toBe(200);
    expect((await post(`${base}/webhooks/${routeKey}`, event('forged'), DEFAULT_SECRET)).status).toBe(401);
    expect((await post(`${base}/webhooks`, event(`default ${index}`), DEFAULT_SECRET)).status).toBe(200);
    expect((await post(`${base}/webhooks`, event('forged'), ACME_SECRET)).status).toBe(401);
    expect(await post(`${base}/webhooks/not-a-known-key-0000000000000000`, event('x'), ACME_SECRET)).toMatchObject({
      status: 404,
      body: { error: { code: 'UNKNOWN_WEBHOOK_PATH' } },
    });
  });

  it('keeps each account its own rows and tells handlers the account', async () => {
    await receiver.drain();
    const rows = await sqlOn(tmp.dbPath).query<{ account: string; job_title: string }>(
      'SELECT account, job_title FROM campaigns ORDER BY account',
    );
    expect(rows.map((r) => r.account)).toEqual(['acme', 'default']);
    expect((await receiver.forAccount('acme').query.getCampaign('camp-adapters'))?.job_title).toMatch(/^acme|warm-up/);
    expect((await receiver.query.getCampaign('camp-adapters'))?.job_title).toMatch(/^default/);
    expect(told.some((t) => t.account === 'acme' && t.title.startsWith('acme'))).toBe(true);
    expect(told.some((t) => t.account === 'default' && t.title.startsWith('default'))).toBe(true);
    expect(told.filter((t) => t.account === 'acme').every((t) => !t.title.startsWith('default'))).toBe(true);
  });

  it('refuses a disabled account before reading its body, and takes it again once enabled', async () => {
    const accounts = (await receiver.accounts())!;
    await accounts.disable('acme');
    const url = `${servers[1]!.url}/webhooks/${routeKey}`;
    const refused = await waitFor(
      async () => {
        const answer = await post(url, event('disabled'), ACME_SECRET);
        return answer.status !== 200 && answer;
      },
      3000,
      'the account to be refused',
    );
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'ACCOUNT_DISABLED' } } });
    await accounts.enable('acme');
    const taken = await waitFor(
      async () => {
        const answer = await post(url, event('enabled'), ACME_SECRET);
        return answer.status !== 403 && answer;
      },
      3000,
      'the account to be taken again',
    );
    expect(taken.status).toBe(200);
  });
});

/** A node:http server in front of a fetch handler, as a runtime built on fetch would call it. */
async function viaFetch(
  handler: (request: Request) => Promise<Response>,
  req: import('node:http').IncomingMessage,
  res: import('node:http').ServerResponse,
): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
  const response = await handler(new Request(`http://localhost${req.url}`, { method: req.method, headers, body: Buffer.concat(chunks) }));
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
}
