// Per-account feed tokens (docs/changes.md) with the real `serve`, on each engine: a token set by
// `accounts set-feed-token` while serve runs opens that account's GET /changes (pages and
// server-sent events) within the registry's poll, and nothing else: another account's feed, the
// console and /metrics are refused; /changes is served while any feed token exists, and no longer
// once the last is cleared. A SIGHUP that re-reads serve's own tokens keeps the accounts'.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createKeyFile, newKey } from '../../src/accounts/key-file.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { killChildren, startServe } from '../support/cli-process.js';
import { runCli } from '../support/command-io.js';
import { ENGINES } from '../support/engines.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'whsec_serve_feed_tokens_5b2e';
const ACME_SECRET = 'whsec_serve_feed_tokens_acme_81f0';
const METRICS = 'metrics-token-feed-tokens-3a7c';
const READ_ONLY = 'read-only-token-feed-tokens-6e2d';
const ACME_TOKEN = 'acme-feed-token-e2e-4c81d09f';

const as = (token: string, extra: Record<string, string> = {}) => ({ Authorization: `Bearer ${token}`, ...extra });

describe.each(ENGINES)('serve with an account feed token on $name', (engine) => {
  const tmp = tempDir('prequal-hooks-feed-tokens-');
  const cleanups: Array<() => void> = [];
  afterAll(() => {
    killChildren();
    for (const cleanup of cleanups) cleanup();
    tmp.cleanup();
  });

  async function cli(args: string[]) {
    const result = await runCli(args);
    expect(result.code, `prequal-hooks ${args.join(' ')}: ${result.stderr}`).toBe(0);
    return result.stdout;
  }

  it("opens that account's feed alone, within the registry's poll, and /changes is served while any feed token exists", async () => {
    const { database, cleanup } = await engine.fresh();
    cleanups.push(cleanup);
    const keyFile = join(tmp.dir, `${engine.name}.accounts-key`);
    createKeyFile(keyFile, newKey());
    const metricsFile = join(tmp.dir, `${engine.name}.metrics-token`);
    writeFileSync(metricsFile, `${METRICS}\n`, { mode: 0o600 });
    const tokenFile = join(tmp.dir, `${engine.name}.acme-feed-token`);
    writeFileSync(tokenFile, `${ACME_TOKEN}\n`, { mode: 0o600 });
    const db = ['--db', database, '--accounts-key-file', keyFile];
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', ...db, '--secret', SECRET, '--metrics-token-file', metricsFile], {
      PREQUAL_HOOKS_DASHBOARD_READONLY_TOKEN: READ_ONLY,
    });
    const get = (path: string, token: string, extra: Record<string, string> = {}) =>
      fetch(`${serve.baseUrl}${path}`, { headers: as(token, extra) });

    // Neither the metrics nor the read-only token opens the feed: it is not served at all.
    expect((await get('/changes?account=acme', ACME_TOKEN)).status).toBe(404);

    const acme = JSON.parse(await cli(['accounts', 'add', ...db, '--account', 'acme', '--secret', ACME_SECRET, '--json'])) as {
      webhookPath: string;
    };
    await cli(['accounts', 'add', ...db, '--account', 'beta', '--secret', `${ACME_SECRET}-beta`]);
    const delivery = signedRequest(JSON.stringify(sampleEvent('campaign.created', { data: { campaign_id: 'cmp_acme_feed' } })), {
      secret: ACME_SECRET,
    });
    await waitFor(
      async () =>
        (await fetch(`${serve.baseUrl}${acme.webhookPath}`, { method: 'POST', headers: delivery.headers, body: delivery.body })).status ===
        200,
      5000,
      "acme's path routed",
    );

    await cli(['accounts', 'set-feed-token', '--db', database, '--account', 'acme', '--token-file', tokenFile]);
    const set = Date.now();
    const page = await waitFor(
      async () => {
        const answer = await get('/changes?account=acme', ACME_TOKEN);
        if (answer.status !== 200) return void (await answer.body?.cancel());
        const body = (await answer.json()) as { changes: Array<{ seq: number; id: string }> };
        return body.changes.length > 0 ? body : undefined;
      },
      5000,
      "acme's token to open acme's feed, with its change",
    );
    // The registry is read every second: taken up within two.
    expect(Date.now() - set).toBeLessThan(2500);
    expect(page.changes[0]).toMatchObject({ seq: 1, id: 'cmp_acme_feed' });

    const stream = new AbortController();
    const live = await fetch(`${serve.baseUrl}/changes?account=acme`, {
      headers: as(ACME_TOKEN, { Accept: 'text/event-stream' }),
      signal: stream.signal,
    });
    expect(live.status).toBe(200);
    let text = '';
    for await (const chunk of live.body as unknown as AsyncIterable<Uint8Array>) {
      text += Buffer.from(chunk).toString('utf8');
      if (text.includes('\n\nid: 1\n')) break;
    }
    expect(text).toContain('"id":"cmp_acme_feed"');
    stream.abort();

    for (const [path, status] of [
      ['/changes', 403],
      ['/changes?account=default', 403],
      ['/changes?account=beta', 403],
      ['/metrics', 403],
      ['/dashboard/', 403],
    ] as const) {
      const answer = await get(path, ACME_TOKEN, path === '/changes?account=beta' ? { Accept: 'text/event-stream' } : {});
      expect(answer.status, path).toBe(status);
      const body = (await answer.json()) as { error: { code: string; message: string } };
      expect(body.error.code, path).toBe('FORBIDDEN');
      expect(JSON.stringify(body), path).not.toContain('cmp_acme_feed');
    }
    // Serve's own tokens never open it, and a request without a token is asked for one.
    expect((await get('/changes?account=acme', READ_ONLY)).status).toBe(403);
    expect((await fetch(`${serve.baseUrl}/changes?account=acme`)).status).toBe(401);

    // A SIGHUP re-reads serve's token files and keeps the accounts' tokens.
    serve.child.kill('SIGHUP');
    await waitFor(() => serve.logLines().find((l) => String(l.msg).startsWith('SIGHUP: tokens re-read')), 5000, 'the reload');
    expect((await get('/changes?account=acme', ACME_TOKEN)).status).toBe(200);
    expect(serve.stdout()).not.toContain(ACME_TOKEN);

    await cli(['accounts', 'set-feed-token', '--db', database, '--account', 'acme', '--clear']);
    await waitFor(
      async () => ((await get('/changes?account=acme', ACME_TOKEN)).status === 404 ? true : undefined),
      5000,
      '/changes no longer served once the last feed token is cleared',
    );
    expect(await serve.stop('SIGTERM')).toBe(0);
  });
});
