// The client spaces its requests so that the sandbox, counting on the same (virtual) clock,
// never answers 429; one throttle can be shared by the clients of one key.
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { createClient, createThrottle } from '../../src/client/index.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { KEY_A } from '../support/sandbox-api.js';

const clock = {
  t: Date.parse('2026-03-10T09:00:00.000Z'),
  sleeps: [] as number[],
  now: () => clock.t,
  sleep: async (ms: number) => void (clock.sleeps.push(ms), (clock.t += ms)),
};
let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await createSandbox({ apiKeys: [KEY_A], seed: 'client-throttle', clock, log: () => {} });
});
afterAll(() => sandbox.close());
beforeEach(() => {
  clock.t += 3_600_000;
  clock.sleeps = [];
});

it('61 requests: the 61st waits a minute, and the service never refuses one', async () => {
  const client = createClient({ apiKey: KEY_A, baseUrl: sandbox.url, clock, retry: { maxRetries: 0 } });
  for (let i = 0; i < 61; i++) await client.getCredits();
  expect(clock.sleeps).toEqual([60_000]);
});

it('two clients of one key share a throttle', async () => {
  const throttle = createThrottle({ clock });
  const first = createClient({ apiKey: KEY_A, baseUrl: sandbox.url, clock, throttle, retry: { maxRetries: 0 } });
  const second = createClient({ apiKey: KEY_A, baseUrl: sandbox.url, clock, throttle, retry: { maxRetries: 0 } });
  for (let i = 0; i < 30; i++) await Promise.all([first.getCredits(), second.listVoices()]);
  await second.getCredits();
  expect(clock.sleeps).toEqual([60_000]);
});

it('without the throttle the service answers 429 (what the throttle spares)', async () => {
  const client = createClient({ apiKey: KEY_A, baseUrl: sandbox.url, clock, throttle: false, retry: { maxRetries: 0 } });
  for (let i = 0; i < 60; i++) await client.getCredits();
  await expect(client.getCredits()).rejects.toMatchObject({ status: 429, code: 'RATE_LIMIT_EXCEEDED', details: { retry_after: 60 } });
});
