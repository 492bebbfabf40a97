// The network policy of destinations (docs/destinations.md, "Network policy") on both engines:
// `destinations add` refuses a URL naming a link-local or cloud metadata address in any spelling
// (exit 2, nothing stored), and an address of a range `--destinations-deny` adds, unless
// `--destinations-allow` opens it; the delivery loop refuses the address it would connect to, a
// literal in another spelling or a name that resolves there (`localhost`, with 127.0.0.0/8
// denied), as a delivery failure that says why, and nothing reaches the receiver; an allowed hole
// delivers. serve takes both options, from flags or their variables.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDeliveryLoop, type DeliveryLoop } from '../../src/destinations/delivery-loop.js';
import type { NetworkRules } from '../../src/destinations/network-policy.js';
import { openDestinations, type Destinations } from '../../src/destinations/registry.js';
import { createLogger } from '../../src/logging.js';
import { replayInto } from '../../src/replay/index.js';
import type { Store } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/samples.js';
import { runCli } from '../support/command-io.js';
import { ENGINES, freshStore } from '../support/engines.js';
import { listen, tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';
import { destinationsOf } from '../../src/destinations/sql.js';

const logger = createLogger({ level: 'silent' });

describe.each(ENGINES)('the network policy of destinations on $name', (engine) => {
  let store: Store;
  let database: string;
  let close: () => Promise<void>;
  let tmp: ReturnType<typeof tempDir>;
  let keyFile: string;
  let destinations: Destinations;
  let loops: DeliveryLoop[];
  let received: string[];
  let target: { url: string; port: string; close: () => Promise<void> };

  beforeEach(async () => {
    ({ store, database, close } = await freshStore(engine));
    tmp = tempDir();
    keyFile = join(tmp.dir, 'accounts-key');
    writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
    destinations = openDestinations(store, { keyFile });
    loops = [];
    received = [];
    const server = await listen(async (req: IncomingMessage, res: ServerResponse) => {
      for await (const _ of req);
      received.push(req.url!);
      res.writeHead(200).end();
    });
    target = { ...server, port: new URL(server.url).port };
  });
  afterEach(async () => {
    await Promise.all(loops.map((loop) => loop.stop(1000)));
    await target.close();
    await close();
    tmp.cleanup();
  });

  const add = (...args: string[]) => runCli(['destinations', 'add', '--db', database, '--accounts-key-file', keyFile, ...args]);

  it('add refuses a link-local or cloud metadata address in any spelling, with exit 2, and stores nothing', async () => {
    const refused = [
      'http://169.254.169.254/latest/meta-data/',
      'http://2852039166/',
      'http://0xA9FEA9FE/',
      'http://0251.0376.0251.0376/',
      'http://[::ffff:169.254.169.254]/',
      'http://[fe80::1]/',
      'https://[fd00:ec2::254]/',
      'redis://169.254.169.254:6379',
      'redis://2852039166:6379',
      'redis://[::ffff:a9fe:a9fe]:6379',
    ];
    for (const url of refused) {
      const result = await add('--url', url);
      expect([url, result.code]).toEqual([url, 2]);
      expect(result.stderr).toMatch(/is refused: .*(169\.254\.0\.0\/16|fe80::\/10|fd00:ec2::254\/128): link-local and cloud metadata/);
    }
    // A redis:// URL keeps the host as written (the resolver would read it as the address it spells).
    expect((await add('--url', 'redis://2852039166:6379')).stderr).toContain('2852039166 is 169.254.169.254, which is in 169.254.0.0/16');
    expect(await destinations.list('default')).toEqual([]);
  });

  it('add refuses an address of a range --destinations-deny adds (or its variable), unless --destinations-allow opens it', async () => {
    const denied = await add('--url', `${target.url}/hook`, '--destinations-deny', '10.0.0.0/8,127.0.0.0/8');
    expect(denied.code).toBe(2);
    expect(denied.stderr).toContain('127.0.0.1 is in 127.0.0.0/8, a range denied to destinations');
    const fromEnvironment = await runCli(
      ['destinations', 'add', '--db', database, '--accounts-key-file', keyFile, '--url', 'http://[::ffff:7f00:1]/'],
      {
        env: { PREQUAL_HOOKS_DESTINATIONS_DENY: '127.0.0.0/8' },
      },
    );
    expect(fromEnvironment.code).toBe(2);
    const wrong = await add('--url', `${target.url}/hook`, '--destinations-deny', '127.0.0.0/33');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain(
      '--destinations-deny must be CIDR ranges such as 10.0.0.0/8 or fd00::/8 (comma-separated), got "127.0.0.0/33"',
    );
    expect(await destinations.list('default')).toEqual([]);
    const opened = await add('--url', 'http://169.254.10.7/hook', '--destinations-allow', '169.254.10.0/24');
    expect(opened.code, opened.stderr).toBe(0);
    expect(await destinations.list('default')).toHaveLength(1);
  });

  const start = (network: NetworkRules) => {
    const loop = startDeliveryLoop({ store, destinations, logger, pollMs: 20, network });
    loops.push(loop);
  };
  const project = () =>
    replayInto({ store }, [sampleEvent('candidate.added', { data: { candidate_id: `c-${randomBytes(3).toString('hex')}` } })]);
  const lastError = async (destination: string) =>
    (await destinationsOf(store).deliveries({ account: 'default', destination }, 'queued', 1))[0]?.last_error ?? undefined;

  it('refuses the address it would connect to: a name resolving to a denied one, or a literal in another spelling', async () => {
    const urls = [
      `http://localhost:${target.port}/by-name`,
      `http://[::ffff:127.0.0.1]:${target.port}/mapped`,
      `http://2130706433:${target.port}/decimal`,
    ];
    const added: Array<{ destination: string }> = [];
    for (const url of urls)
      added.push(await destinations.add({ account: 'default', url, filter: { entity: 'candidate' }, schedule: [0, 3_600_000] }));
    start({ deny: ['127.0.0.0/8'] });
    await project();
    const errors = await waitFor(
      async () => {
        const all = await Promise.all(added.map((d) => lastError(d.destination)));
        return all.every((e) => e !== undefined) ? all : undefined;
      },
      10_000,
      'three failures',
    );
    expect(errors).toEqual([
      'refused by the network policy: localhost resolves to 127.0.0.1, which is in 127.0.0.0/8, a range denied to destinations',
      'refused by the network policy: ::ffff:7f00:1 is in 127.0.0.0/8, a range denied to destinations',
      'refused by the network policy: 127.0.0.1 is in 127.0.0.0/8, a range denied to destinations',
    ]);
    expect(received).toEqual([]);
  });

  it('delivers through a hole --destinations-allow opens in a denied range', async () => {
    await destinations.add({ account: 'default', url: `http://localhost:${target.port}/by-name`, filter: { entity: 'candidate' } });
    start({ deny: ['127.0.0.0/8'], allow: ['127.0.0.1/32', '::1/128'] });
    await project();
    await waitFor(() => received.length === 1, 10_000, 'delivered');
    expect(received).toEqual(['/by-name']);
  });

  it('serve refuses a wrong range with exit 2, naming where it was given', async () => {
    const wrong = await runCli(['serve', '--db', database, '--print-config'], {
      env: { PREQUAL_HOOKS_DESTINATIONS_ALLOW: '169.254.0.0/16,nonsense' },
    });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('PREQUAL_HOOKS_DESTINATIONS_ALLOW must be CIDR ranges');
    const shown = await runCli(['serve', '--db', database, '--print-config', '--destinations-deny', '10.0.0.0/8,fd00::/8']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      'destinations-deny': { value: ['10.0.0.0/8', 'fd00::/8'], from: '--destinations-deny' },
    });
  });
});
