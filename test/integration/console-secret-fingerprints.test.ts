// The overview's count of verified requests by secret: the full console names each secret by its
// fingerprint, the read-only one by a number only (a fingerprint is a plain SHA-256 prefix: a viewer
// could test guesses of a weak secret against it offline).
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from '../../src/receiver/create-receiver.js';
import { secretFingerprint } from '../../src/signature.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { listen, tempDir } from '../support/servers.js';

const TOKEN = 'console-fingerprints-token-8d1f';
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const SECRETS = ['whsec_console-fingerprints-old-4a2b', 'whsec_console-fingerprints-new-9c7e'];

describe('secret fingerprints in the console', () => {
  const tmp = tempDir();
  let receiver: Receiver;
  let server: { url: string; close: () => Promise<void> };

  beforeAll(async () => {
    receiver = createReceiver({ database: tmp.dbPath, secrets: SECRETS, accounts: false });
    const app = express();
    app.post('/webhooks', receiver.middleware());
    app.use('/ops', receiver.dashboard({ token: TOKEN }));
    app.use('/ro', receiver.dashboard({ token: TOKEN, readOnly: true }));
    server = await listen(app as never);
    for (const secret of SECRETS) {
      const request = signedRequest(sampleEvent('campaign.created'), { secret });
      expect((await fetch(`${server.url}/webhooks`, { method: 'POST', headers: request.headers, body: request.body })).status).toBe(200);
    }
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
    tmp.cleanup();
  });

  const text = async (path: string) => await (await fetch(`${server.url}${path}`, { headers: AUTH })).text();

  it('shows the full console each fingerprint with its count', async () => {
    const overview = JSON.parse(await text('/ops/api/overview')) as { secrets: unknown[] };
    expect(overview.secrets).toEqual(expect.arrayContaining(SECRETS.map((s) => ({ fingerprint: secretFingerprint(s), requests: 1 }))));
    const page = await text('/ops/');
    for (const secret of SECRETS) expect(page).toContain(secretFingerprint(secret));
    expect(await text('/ops/events/1')).toContain(secretFingerprint(SECRETS[0]!));
  });

  it('shows the read-only console the counts, never a fingerprint', async () => {
    const overview = JSON.parse(await text('/ro/api/overview')) as { secrets: unknown[] };
    expect(overview.secrets).toEqual([
      { secret: 1, requests: 1 },
      { secret: 2, requests: 1 },
    ]);
    for (const path of ['/ro/', '/ro/api/overview', '/ro/events/1', '/ro/events/2', '/ro/api/events']) {
      const body = await text(path);
      for (const secret of SECRETS) expect(body).not.toContain(secretFingerprint(secret));
    }
    expect(await text('/ro/')).toContain('Fingerprints are shown to the full console only.');
    expect(await text('/ro/events/1')).toContain('its fingerprint is shown to the full console only');
  });
});
