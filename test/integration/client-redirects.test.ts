// The key goes only where baseUrl points. A real "front" server stands at the service's address
// and answers redirects as scripted; a "thief" on another port of 127.0.0.1 (another origin)
// records every request it gets and answers a well-formed credits body, so that a client that
// followed would both leak the key and return the thief's answer as the account's.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createClient, PrequalRedirectError, PrequalResponseError } from '../../src/client/index.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { JOB as SAMPLE_JOB, KEY_A } from '../support/sandbox-api.js';

const JOB = { ...SAMPLE_JOB, contract_type: 'CDD' as const };
const THIEFS_CREDITS = {
  credits_available: 999_999,
  credits_used_this_month: 0,
  subscription_type: 'enterprise',
  reset_date: '2026-12-01',
};

interface Heard {
  method: string;
  url: string;
  key: string | undefined;
}

async function listenOn(handler: (request: IncomingMessage, response: ServerResponse, body: Buffer) => void) {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => handler(request, response, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

let sandbox: Sandbox;
let thief: Awaited<ReturnType<typeof listenOn>>;
let front: Awaited<ReturnType<typeof listenOn>>;
let thiefHeard: Heard[] = [];
let frontHeard: Heard[] = [];
/** What the front does with the next request: redirect, or forward to the sandbox. */
let script: Array<{ status: number; location: string } | 'forward'> = [];

const heard = (request: IncomingMessage): Heard => ({
  method: request.method!,
  url: request.url!,
  key: request.headers['x-api-key'] as string | undefined,
});

beforeAll(async () => {
  sandbox = await createSandbox({ apiKeys: [KEY_A], credits: 100, seed: 'client-redirects', interviewMs: 600_000, log: () => {} });
  thief = await listenOn((request, response) => {
    thiefHeard.push(heard(request));
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(THIEFS_CREDITS));
  });
  front = await listenOn((request, response, body) => {
    frontHeard.push(heard(request));
    const step = script.shift() ?? 'forward';
    if (step !== 'forward') {
      response.writeHead(step.status, { location: step.location, 'content-type': 'text/plain' });
      return void response.end('moved');
    }
    // Forwarded as is, whatever path prefix a same-origin redirect added.
    const path = request.url!.replace(/^\/moved/, '');
    void fetch(`${sandbox.url}${path}`, {
      method: request.method!,
      headers: { 'x-api-key': String(request.headers['x-api-key']), 'content-type': 'application/json' },
      ...(body.length > 0 && { body }),
    }).then(async (answer) => {
      response.writeHead(answer.status, { 'content-type': 'application/json' });
      response.end(await answer.text());
    });
  });
});
afterAll(async () => {
  await front.close();
  await thief.close();
  await sandbox.close();
});
beforeEach(() => {
  thiefHeard = [];
  frontHeard = [];
  script = [];
});

const client = () => createClient({ apiKey: KEY_A, baseUrl: front.url, throttle: false, retry: { maxRetries: 0 } });

describe('a redirect to another origin is not followed: the key stays home', () => {
  for (const status of [301, 302, 303, 307, 308]) {
    it(`${status} from the service's address to another port: PrequalRedirectError naming it, nothing sent there`, async () => {
      script = [{ status, location: `${thief.url}/api/v1/account/credits` }];
      const error = await client()
        .getCredits()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PrequalRedirectError);
      expect(error).toMatchObject({ status, target: `${thief.url}/api/v1/account/credits`, attempts: 1 });
      expect((error as Error).message).toContain(`answered ${status}, a redirect to another origin than ${front.url}`);
      expect((error as Error).message).toContain(thief.url);
      expect((error as Error).message).not.toContain(KEY_A);
      expect(thiefHeard).toEqual([]);
      expect(frontHeard).toHaveLength(1);
    });
  }

  it('a 307 of a POST (the body holds the job and candidates) is not replayed to the other origin', async () => {
    script = [{ status: 307, location: `${thief.url}/api/v1/campaigns/create` }];
    await expect(client().createCampaign(JOB)).rejects.toBeInstanceOf(PrequalRedirectError);
    expect(thiefHeard).toEqual([]);
  });

  it('a same-origin hop first, then another origin: refused at the second, the key sent to the service only', async () => {
    script = [
      { status: 302, location: '/moved/api/v1/account/credits' },
      { status: 302, location: `${thief.url}/api/v1/account/credits` },
    ];
    await expect(client().getCredits()).rejects.toBeInstanceOf(PrequalRedirectError);
    expect(frontHeard.map((h) => h.key)).toEqual([KEY_A, KEY_A]);
    expect(thiefHeard).toEqual([]);
  });

  it('a redirect is not retried, even with retries on', async () => {
    script = [
      { status: 307, location: `${thief.url}/x` },
      { status: 307, location: `${thief.url}/x` },
    ];
    const retrying = createClient({ apiKey: KEY_A, baseUrl: front.url, throttle: false, retry: { maxRetries: 3, baseDelayMs: 1 } });
    await expect(retrying.getCredits()).rejects.toBeInstanceOf(PrequalRedirectError);
    expect(frontHeard).toHaveLength(1);
    expect(thiefHeard).toEqual([]);
  });
});

describe('a redirect within the same origin is followed, within bounds', () => {
  it('302 of a GET: followed with the key, the service answers', async () => {
    script = [{ status: 302, location: '/moved/api/v1/account/credits' }];
    const credits = await client().getCredits();
    expect(credits).not.toEqual(THIEFS_CREDITS);
    expect(credits.credits_available).toBe(100);
    expect(frontHeard).toEqual([
      { method: 'GET', url: '/api/v1/account/credits', key: KEY_A },
      { method: 'GET', url: '/moved/api/v1/account/credits', key: KEY_A },
    ]);
  });

  it('307 of a POST: followed with its method and body', async () => {
    script = [{ status: 307, location: `${front.url}/moved/api/v1/campaigns/create` }];
    const created = await client().createCampaign(JOB);
    expect(created.campaign_id).toMatch(/^cmp_/);
    expect(frontHeard.map((h) => `${h.method} ${h.url}`)).toEqual(['POST /api/v1/campaigns/create', 'POST /moved/api/v1/campaigns/create']);
  });

  it('302 of a PATCH is refused (following would send a GET instead), and so is a loop', async () => {
    script = [{ status: 302, location: '/moved/api/v1/campaigns/cmp_x/status' }];
    await expect(client().changeCampaignStatus('cmp_x', 'paused')).rejects.toThrow(/a redirect that would turn the PATCH into a GET/);
    script = Array.from({ length: 10 }, () => ({ status: 302, location: '/api/v1/account/credits' }));
    await expect(client().getCredits()).rejects.toThrow(/after 5 redirects already/);
    expect(thiefHeard).toEqual([]);
  });
});

describe('plain http only on this machine, unless asked for', () => {
  it('refuses an http baseUrl on another host before any request; accepts loopback, https, and the opt-in', () => {
    expect(() => createClient({ apiKey: KEY_A, baseUrl: 'http://api.example.com' })).toThrow(
      /^createClient: baseUrl http:\/\/api\.example\.com is plain http: .*opt in with allowInsecureHttp: true$/,
    );
    expect(() => createClient({ apiKey: KEY_A, baseUrl: 'http://10.1.2.3:8789/api/v1' })).toThrow(TypeError);
    for (const baseUrl of ['https://api.example.com', 'http://127.0.0.1:8789', 'http://localhost:8789/api/v1', 'http://[::1]:8789']) {
      expect(() => createClient({ apiKey: KEY_A, baseUrl }), baseUrl).not.toThrow();
    }
    expect(() => createClient({ apiKey: KEY_A, baseUrl: 'http://api.example.com', allowInsecureHttp: true })).not.toThrow();
  });
});

describe('an answer body is read up to maxResponseBytes', () => {
  it('an endless body (no Content-Length) is cut at the limit: PrequalResponseError, not a hang or the memory', async () => {
    let closed!: () => void;
    const cut = new Promise<void>((resolve) => (closed = resolve));
    const hose = await listenOn((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pour = () => {
        while (!response.destroyed && response.write(chunk));
        if (!response.destroyed) response.once('drain', pour);
      };
      response.once('close', () => closed());
      pour();
    });
    try {
      const small = createClient({
        apiKey: KEY_A,
        baseUrl: hose.url,
        throttle: false,
        retry: { maxRetries: 0 },
        maxResponseBytes: 1024 * 1024,
      });
      const error = await small.getCredits().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PrequalResponseError);
      expect((error as PrequalResponseError).issues).toEqual([
        "body: larger than 1048576 bytes, the client's maxResponseBytes; not read further",
      ]);
      await cut; // the client hung up: the server stops pouring
    } finally {
      await hose.close();
    }
  });

  it('a Content-Length over the default 8 MB is refused at once, before the body comes; a body within the limit is read', async () => {
    // Headers announce 9 MB, then a few bytes, then nothing: only a client that trusts the
    // announcement answers before its timeout.
    const big = await listenOn((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(9 * 1024 * 1024) });
      response.write('{"credits_available": ');
    });
    try {
      const error = await createClient({ apiKey: KEY_A, baseUrl: big.url, throttle: false, retry: { maxRetries: 0 }, timeoutMs: 5000 })
        .getCredits()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PrequalResponseError);
      expect((error as PrequalResponseError).issues[0]).toContain('larger than 8388608 bytes');
    } finally {
      await big.close();
    }
    // The sandbox's credits body is about 100 bytes: 200 bytes of room is enough.
    const tight = createClient({ apiKey: KEY_A, baseUrl: sandbox.url, throttle: false, maxResponseBytes: 200 });
    expect(await tight.getCredits()).toEqual({
      credits_available: 100,
      credits_used_this_month: 0,
      subscription_type: 'Service Resonance',
      reset_date: expect.stringMatching(/^\d{4}-\d{2}-01$/),
    });
    expect(() => createClient({ apiKey: KEY_A, baseUrl: sandbox.url, maxResponseBytes: 0 })).toThrow(
      /maxResponseBytes must be a whole number of bytes above 0/,
    );
  });
});
