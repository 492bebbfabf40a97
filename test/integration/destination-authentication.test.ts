// How destinations prove who is calling, on both engines, against servers of the test's own: headers
// of the operator's on every POST (never listed); an OAuth2 token endpoint that expires its tokens
// within a second (fetched again before they expire, and once on a 401; its failures a delivery's
// failure with its reason, the secret never shown); an HTTPS server that requires a client
// certificate, made with openssl here (a key that is not the certificate's refused, set-tls
// rotating it); Ed25519 signatures (v1a) verified with the public key printed once, and v1 beside
// v1a during a move.
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startDeliveryLoop, type DeliveryLoop } from '../../src/destinations/delivery-loop.js';
import { openDestinations, type Destinations } from '../../src/destinations/registry.js';
import { destinationsOf } from '../../src/destinations/sql.js';
import { createLogger } from '../../src/logging.js';
import { replayInto } from '../../src/replay/index.js';
import type { Store } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/samples.js';
import { runCli } from '../support/command-io.js';
import { ENGINES, freshStore } from '../support/engines.js';
import { findExecutable, needs } from '../support/needs.js';
import { createTestPki } from '../support/pki.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const logger = createLogger({ level: 'silent' });
const OPENSSL = findExecutable(['openssl']);
const hasOpenssl = () =>
  needs('openssl', OPENSSL !== undefined, { install: 'apt-get install -y openssl', untested: 'mutual TLS to destinations' });
const CLIENT_SECRET = 'oauth2-client-S3cret-9d1f';
const HEADER_VALUE = 'hdr-Value-c0ffee-7a21';

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
  peerCertificate: string | undefined;
}

/** A destination of the test's own: what each POST carried; `answer` decides the status. */
async function receiver(answer: (request: IncomingMessage) => number = () => 204, tls?: { cert: string; key: string; ca: string }) {
  const received: Received[] = [];
  const handle = (request: IncomingMessage, response: import('node:http').ServerResponse) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const peer = (request.socket as TLSSocket).getPeerCertificate?.();
      received.push({ headers: request.headers, body, peerCertificate: peer?.subject?.CN as string | undefined });
      response.statusCode = answer(request);
      response.end();
    });
  };
  const server: Server =
    tls === undefined ? createHttpServer(handle) : createHttpsServer({ ...tls, requestCert: true, rejectUnauthorized: true }, handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `${tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}/hook`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An OAuth2 token endpoint of the test's own: client credentials by Basic, tokens that live `lifeMs`. */
async function tokenEndpoint(lifeMs: number) {
  const issued = new Map<string, number>();
  const grants: Array<{ authorization: string | undefined; body: string }> = [];
  let refuse = false;
  const server = createHttpServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      grants.push({ authorization: request.headers.authorization, body });
      const expected = `Basic ${Buffer.from(`crm-sync:${CLIENT_SECRET}`).toString('base64')}`;
      response.setHeader('content-type', 'application/json');
      if (refuse || request.headers.authorization !== expected) {
        response.statusCode = 401;
        response.end(JSON.stringify({ error: 'invalid_client', error_description: `bad ${CLIENT_SECRET}` }));
        return;
      }
      const token = `tok_${randomBytes(6).toString('hex')}`;
      issued.set(token, Date.now() + lifeMs);
      response.end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: lifeMs / 1000 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/oauth/token`,
    grants,
    /** Whether a request's Bearer token is one it issued that has not expired. */
    valid: (request: IncomingMessage) => {
      const token = request.headers.authorization?.replace(/^Bearer /, '') ?? '';
      return (issued.get(token) ?? 0) > Date.now();
    },
    revoke: () => issued.clear(),
    refuse: (value: boolean) => (refuse = value),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const candidate = (id: string) => sampleEvent('candidate.added', { data: { candidate_id: id, campaign_id: 'cmp_1' } });

describe.each(ENGINES)('destination authentication on $name', (engine) => {
  let store: Store;
  let database: string;
  let close: () => Promise<void>;
  let destinations: Destinations;
  let loops: DeliveryLoop[];
  let tmp: ReturnType<typeof tempDir>;
  let keyFile: string;
  const closers: Array<() => Promise<void>> = [];

  beforeEach(async () => {
    ({ store, database, close } = await freshStore(engine));
    tmp = tempDir();
    keyFile = join(tmp.dir, 'accounts-key');
    writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
    destinations = openDestinations(store, { keyFile });
    loops = [];
  });
  afterEach(async () => {
    await Promise.all(loops.map((loop) => loop.stop(1000)));
    await Promise.all(closers.splice(0).map((c) => c()));
    await close();
    tmp.cleanup();
  });
  const start = () => loops.push(startDeliveryLoop({ store, destinations, logger, pollMs: 20, timeoutMs: 2000 }));
  const project = async (ids: string[]) => {
    for (const id of ids) await replayInto({ store }, [candidate(id)]);
  };
  // `list` needs no key: it shows nothing sealed.
  const cli = (verb: string, ...args: string[]) =>
    runCli(['destinations', verb, ...args, '--db', database, ...(verb === 'list' ? [] : ['--accounts-key-file', keyFile])]);

  it('sends the headers on every POST; list shows their names only; hop-by-hop and signature headers are refused', async () => {
    const server = await receiver();
    closers.push(server.close);
    const added = await cli('add', '--url', server.url, '--header', `X-Api-Key: ${HEADER_VALUE}`, '--header', 'X-Tenant: a, b', '--json');
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout).auth).toMatchObject({ headers: ['X-Api-Key', 'X-Tenant'], signatures: ['v1'] });
    start();
    await project(['h1', 'h2']);
    await waitFor(() => server.received.length >= 2, 10_000, 'two POSTs');
    for (const r of server.received) expect(r.headers).toMatchObject({ 'x-api-key': HEADER_VALUE, 'x-tenant': 'a, b' });
    const listed = await cli('list', '--table');
    expect(listed.stdout).toContain('headers X-Api-Key, X-Tenant');
    const json = await cli('list', '--json');
    for (const output of [added, listed, json]) expect(output.stdout + output.stderr).not.toContain(HEADER_VALUE);
    expect(JSON.stringify(await destinationsOf(store).list())).not.toContain(HEADER_VALUE);
    for (const header of [
      'Connection: close',
      'Transfer-Encoding: chunked',
      'webhook-signature: v1,x',
      'Host: evil',
      'X-Bad\nInjected: 1',
    ]) {
      const refused = await cli('add', '--url', server.url, '--header', header);
      expect(refused.code, header).toBe(2);
    }
  });

  it('OAuth2: a token by Basic, sent as Bearer, fetched again before it expires and once on a 401; the endpoint failing is a failure with its reason', async () => {
    const endpoint = await tokenEndpoint(1_000);
    closers.push(endpoint.close);
    const server = await receiver((request) => (endpoint.valid(request) ? 204 : 401));
    closers.push(server.close);
    const secretFile = join(tmp.dir, 'client-secret');
    writeFileSync(secretFile, `${CLIENT_SECRET}\n`, { mode: 0o600 });
    // The client secret crosses to the token endpoint: never in clear text off this machine.
    const plain = await cli(
      'add',
      '--url',
      server.url,
      '--oauth2-token-url',
      'http://auth.example.com/token',
      '--oauth2-client-id',
      'crm-sync',
      '--oauth2-client-secret-file',
      secretFile,
    );
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain('--oauth2-token-url must be https://');
    const added = await cli(
      'add',
      '--url',
      server.url,
      '--oauth2-token-url',
      endpoint.url,
      '--oauth2-client-id',
      'crm-sync',
      '--oauth2-client-secret-file',
      secretFile,
      '--oauth2-scope',
      'changes:write',
      '--retry-schedule',
      '0s,50ms,50ms,50ms,50ms,50ms',
      '--json',
    );
    expect(added.code, added.stderr).toBe(0);
    const { destination } = JSON.parse(added.stdout) as { destination: string };
    start();
    // Changes one after another until the endpoint has issued three tokens: each lives a second.
    let n = 0;
    await waitFor(
      async () => {
        await project([`o${++n}`]);
        await waitFor(() => server.received.filter((r) => r.headers.authorization !== undefined).length >= n, 5_000, `POST ${n}`);
        return endpoint.grants.length >= 3;
      },
      20_000,
      'three tokens',
    );
    expect(endpoint.grants[0]!.body).toBe('grant_type=client_credentials&scope=changes%3Awrite');
    // Fetched again before it expired: no POST was refused for an expired token.
    expect(server.received.every((r) => r.headers.authorization?.startsWith('Bearer tok_'))).toBe(true);
    const key = { account: 'default', destination };
    expect(await destinationsOf(store).deliveries(key, 'dead', 10)).toEqual([]);
    // Revoked: the destination answers 401, the token is fetched again once, and the change goes.
    const grants = endpoint.grants.length;
    endpoint.revoke();
    await project(['revoked']);
    await waitFor(async () => (await destinations.list('default'))[0]!.lag === 0, 10_000, 'sent with a new token');
    expect(endpoint.grants.length).toBeGreaterThan(grants);
    expect(server.received.filter((r) => !endpoint.valid({ headers: r.headers } as IncomingMessage)).length).toBeGreaterThan(0);
    expect((await destinations.list('default'))[0]).toMatchObject({ state: 'active', dead: 0 });
    // The endpoint refusing: a failure of the destination, with its reason, never the secret.
    endpoint.refuse(true);
    endpoint.revoke();
    await project(['refused']);
    const error = await waitFor(
      async () => (await destinationsOf(store).deliveries(key, 'queued', 1))[0]?.last_error ?? undefined,
      10_000,
      'a failure',
    );
    expect(error).toBe('the OAuth2 token endpoint answered 401 (invalid_client)');
    const listed = await cli('list', '--json');
    expect(JSON.parse(listed.stdout).destinations[0].auth.oauth2).toEqual({
      tokenUrl: endpoint.url,
      clientId: 'crm-sync',
      scope: 'changes:write',
    });
    expect(listed.stdout + added.stdout + JSON.stringify(await destinationsOf(store).list())).not.toContain(CLIENT_SECRET);
  });

  describe.skipIf(!hasOpenssl())('mutual TLS', () => {
    let pki: ReturnType<typeof tempDir>;
    const file = (name: string) => join(pki.dir, name);
    beforeAll(() => {
      pki = tempDir('prequal-hooks-mtls-');
      const certificates = createTestPki(pki.dir, 'Test CA', OPENSSL);
      certificates.sign('server', 'subjectAltName=IP:127.0.0.1');
      certificates.sign('hooks-client', 'extendedKeyUsage=clientAuth');
      certificates.sign('hooks-client-2', 'extendedKeyUsage=clientAuth');
    });
    afterAll(() => pki?.cleanup());

    it("presents the client certificate the server requires; a key not the certificate's is refused; set-tls rotates it", async () => {
      const server = await receiver(() => 204, {
        cert: readFileSync(file('server.crt'), 'utf8'),
        key: readFileSync(file('server.key'), 'utf8'),
        ca: readFileSync(file('ca.crt'), 'utf8'),
      });
      closers.push(server.close);
      const mismatch = await cli(
        'add',
        '--url',
        server.url,
        '--client-cert',
        file('hooks-client.crt'),
        '--client-key',
        file('hooks-client-2.key'),
        '--ca',
        file('ca.crt'),
      );
      expect(mismatch.code).toBe(2);
      expect(mismatch.stderr).toMatch(
        /--client-key does not match --client-cert: the key is not the one of the certificate CN=hooks-client/,
      );
      const plain = await cli('add', '--url', server.url, '--ca', file('ca.crt'), '--json');
      const added = await cli(
        'add',
        '--url',
        server.url,
        '--client-cert',
        file('hooks-client.crt'),
        '--client-key',
        file('hooks-client.key'),
        '--ca',
        file('ca.crt'),
        '--json',
      );
      expect(added.code, added.stderr).toBe(0);
      const body = JSON.parse(added.stdout) as { destination: string; auth: { clientCertificate: { subject: string } } };
      expect(body.auth.clientCertificate.subject).toBe('CN=hooks-client');
      start();
      await project(['t1']);
      await waitFor(() => server.received.length >= 1, 10_000, 'a POST with the certificate');
      expect([...new Set(server.received.map((r) => r.peerCertificate))]).toEqual(['hooks-client']);
      // Without a certificate the server refuses the handshake: a failure, never a POST.
      const withoutId = (JSON.parse(plain.stdout) as { destination: string }).destination;
      await waitFor(
        async () =>
          (await destinationsOf(store).deliveries({ account: 'default', destination: withoutId }, 'queued', 1))[0]?.last_error ?? undefined,
        10_000,
        'refused without one',
      );
      const rotated = await cli(
        'set-tls',
        '--destination',
        body.destination,
        '--client-cert',
        file('hooks-client-2.crt'),
        '--client-key',
        file('hooks-client-2.key'),
        '--ca',
        file('ca.crt'),
      );
      expect(rotated.code, rotated.stderr).toBe(0);
      await project(['t2']);
      await waitFor(() => server.received.some((r) => r.peerCertificate === 'hooks-client-2'), 10_000, 'the new certificate presented');
      const listed = await cli('list', '--json');
      expect(listed.stdout).toContain('CN=hooks-client-2');
      expect(listed.stdout + JSON.stringify(await destinationsOf(store).list())).not.toContain('PRIVATE KEY');
    });
  });

  it('Ed25519: v1a verified with the public key printed once; rotate-secret --signing ed25519 sends v1 beside v1a for --keep-previous', async () => {
    const server = await receiver();
    closers.push(server.close);
    const verifies = (publicKey: string, r: Received) => {
      const raw = Buffer.from(publicKey.slice('whpk_'.length), 'base64');
      const key = createPublicKey({
        key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]),
        format: 'der',
        type: 'spki',
      });
      const content = `${String(r.headers['webhook-id'])}.${String(r.headers['webhook-timestamp'])}.${r.body}`;
      return String(r.headers['webhook-signature'])
        .split(' ')
        .some((s) => s.startsWith('v1a,') && verify(null, Buffer.from(content), key, Buffer.from(s.slice(4), 'base64')));
    };
    const added = await cli('add', '--url', server.url, '--signing', 'ed25519');
    expect(added.code, added.stderr).toBe(0);
    const publicKey = /public key, shown once[^:]*: (whpk_\S+)/.exec(added.stdout)![1]!;
    expect(Buffer.from(publicKey.slice(5), 'base64')).toHaveLength(32);
    expect(added.stdout).not.toMatch(/whsec_|whsk_/);
    start();
    await project(['e1']);
    await waitFor(() => server.received.length >= 1, 10_000, 'a signed POST');
    expect(String(server.received[0]!.headers['webhook-signature'])).toMatch(/^v1a,\S+$/);
    expect(verifies(publicKey, server.received[0]!)).toBe(true);
    // A v1 destination moving to v1a: both signatures for the overlap.
    const moving = await cli('add', '--url', `${server.url}?m=1`, '--json');
    const { destination, secret } = JSON.parse(moving.stdout) as { destination: string; secret: string };
    const rotated = await cli('rotate-secret', '--destination', destination, '--signing', 'ed25519', '--keep-previous', '1h');
    expect(rotated.code, rotated.stderr).toBe(0);
    const next = /public key, shown once[^:]*: (whpk_\S+)/.exec(rotated.stdout)![1]!;
    await project(['e2']);
    const both = await waitFor(
      () => server.received.find((r) => r.headers['webhook-signature']?.includes('v1,')),
      10_000,
      'a POST to the moving one',
    );
    expect(
      String(both.headers['webhook-signature'])
        .split(' ')
        .map((s) => s.split(',')[0]),
    ).toEqual(['v1a', 'v1']);
    expect(verifies(next, both)).toBe(true);
    expect(secret).toMatch(/^whsec_/);
    const listed = await cli('list', '--table');
    expect(listed.stdout).toContain('signed v1+v1a');
  });
});
