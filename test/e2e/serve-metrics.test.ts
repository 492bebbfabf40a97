import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { killChildren, startServe } from '../support/cli-process.js';
import { tempDir } from '../support/servers.js';

const SECRET = 'whsec_serve_metrics_9a1c';
const TOKEN = 'dash-8f3e1c2d9b7a';

describe('GET /metrics of prequal-hooks serve', () => {
  const tmp = tempDir();
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });

  it('answers the Prometheus text to Bearer and Basic holders of the token, 401 in the envelope otherwise, and never logs the token', async () => {
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', join(tmp.dir, 'm.db'), '--secret', SECRET, '--log-level', 'info'], { PREQUAL_HOOKS_DASHBOARD_TOKEN: TOKEN });
    const request = signedRequest(sampleEvent('candidate.added'), { secret: SECRET });
    expect((await fetch(serve.webhookUrl, { method: 'POST', headers: request.headers, body: request.body })).status).toBe(200);
    expect((await fetch(serve.webhookUrl, { method: 'POST', headers: {}, body: request.body })).status).toBe(401);

    const bearer = await fetch(`${serve.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(bearer.status).toBe(200);
    expect(bearer.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await bearer.text();
    expect(text).toMatch(/prequal_hooks_requests_total\{status="200",outcome="stored"\} 1/);
    expect(text).toMatch(/prequal_hooks_requests_total\{status="401",outcome="refused"\} 1/);
    expect(text).toMatch(/prequal_hooks_storage_up 1/);

    const basic = await fetch(`${serve.baseUrl}/metrics`, { headers: { Authorization: `Basic ${Buffer.from(`ops:${TOKEN}`).toString('base64')}` } });
    expect(basic.status).toBe(200);

    const attempts: Array<Record<string, string>> = [{}, { Authorization: 'Bearer wrong' }, { Authorization: `Basic ${Buffer.from('ops:wrong').toString('base64')}` }];
    for (const headers of attempts) {
      const refused = await fetch(`${serve.baseUrl}/metrics`, { headers });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    }
    expect(await serve.stop()).toBe(0);
    expect(serve.stdout() + serve.stderr()).not.toContain(TOKEN);
  });

  it('is not served at all without a token', async () => {
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', join(tmp.dir, 'n.db'), '--secret', SECRET]);
    const response = await fetch(`${serve.baseUrl}/metrics`, { headers: { Authorization: 'Bearer anything' } });
    expect(response.status).toBe(404);
    expect(await serve.stop()).toBe(0);
  });
});
