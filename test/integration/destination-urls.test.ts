// Destination URLs whose query holds a credential (docs/destinations.md, "Secrets at rest"), on
// both engines: `add` and `list` (table and JSON), errors and the delivery loop's log lines show
// the query's names and never its values, the row holds none of them, and the receiver is sent
// the whole URL; rows written before (their query in clear) are masked when a command or serve
// next opens the database, keep what they open to, and a backup taken then holds no clear query.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withoutCredentials } from '../../src/client/origin.js';
import { startDeliveryLoop } from '../../src/destinations/delivery-loop.js';
import { openDestinations } from '../../src/destinations/registry.js';
import { createLogger } from '../../src/logging.js';
import { replayInto } from '../../src/replay/index.js';
import { maskedUrl } from '../../src/destinations/masked-url.js';
import { openStore } from '../../src/store/open.js';
import { sampleEvent } from '../../src/testing/samples.js';
import { runCli } from '../support/command-io.js';
import { ENGINES, type EngineUnderTest } from '../support/engines.js';
import { listen, tempDir } from '../support/servers.js';
import { sqlOn } from '../support/sql.js';
import { waitFor } from '../support/wait-for.js';
import { destinationsOf } from '../../src/destinations/sql.js';

const KEY = 'k3y-in-query-9f2c';
const TOKEN = 'tok3n-alone-77ab';

describe.each(ENGINES)('destination URLs with a query on $name', (engine: EngineUnderTest) => {
  let database: string;
  let cleanup: () => void;
  let tmp: ReturnType<typeof tempDir>;
  let keyFile: string;

  beforeEach(async () => {
    ({ database, cleanup } = await engine.fresh());
    tmp = tempDir();
    keyFile = join(tmp.dir, 'accounts-key');
    writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
    expect((await runCli(['migrate', '--db', database])).code).toBe(0);
  });
  afterEach(() => {
    cleanup();
    tmp.cleanup();
  });

  const cli = (...args: string[]) => runCli(['destinations', ...args, '--db', database]);
  const rows = async () => JSON.stringify(await sqlOn(database).query('SELECT * FROM destinations'));

  it('shows the names of the query and never its values; the receiver is sent the whole URL', async () => {
    const seen: string[] = [];
    const target = await listen(async (req: IncomingMessage, res: ServerResponse) => {
      for await (const _ of req);
      seen.push(req.url!);
      res.writeHead(seen.length === 1 ? 500 : 200).end();
    });
    const lines: string[] = [];
    try {
      const url = `${target.url}/hook?key=${KEY}&mode=fast&${TOKEN}`;
      const added = await cli(
        'add',
        '--accounts-key-file',
        keyFile,
        '--url',
        url,
        '--filter',
        'entity=candidate',
        '--retry-schedule',
        '0s,50ms',
        '--json',
      );
      expect(added.code, added.stderr).toBe(0);
      const shown = `${target.url}/hook?key=***&mode=***&***`;
      expect(JSON.parse(added.stdout)).toMatchObject({ url: shown });
      const json = await cli('list', '--json');
      expect(JSON.parse(json.stdout).destinations[0]).toMatchObject({ url: shown });
      const table = await cli('list', '--table');
      expect(table.stdout).toContain('/hook?key=***&mode=***&***');
      const wrong = await cli('add', '--url', `ftp://example.com/x?key=${KEY}`);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain('ftp://example.com/x?key=***');
      for (const output of [added, json, table, wrong]) expect(output.stdout + output.stderr).not.toMatch(new RegExp(`${KEY}|${TOKEN}`));
      expect(await rows()).not.toMatch(new RegExp(`${KEY}|${TOKEN}`));

      // Delivered to the whole URL; the failure of the first attempt logged with it masked.
      const store = await openStore(database);
      const sink = new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      });
      const loop = startDeliveryLoop({
        store,
        destinations: openDestinations(store, { keyFile }),
        logger: createLogger({ level: 'warn' }, sink),
        pollMs: 20,
      });
      try {
        await replayInto({ store }, [sampleEvent('candidate.added', { data: { candidate_id: 'c1', campaign_id: 'cmp_1' } })]);
        await waitFor(() => seen.length === 2, 10_000, 'delivered after one failure');
      } finally {
        await loop.stop(1000);
        await store.close();
      }
      expect(seen).toEqual([`/hook?key=${KEY}&mode=fast&${TOKEN}`, `/hook?key=${KEY}&mode=fast&${TOKEN}`]);
      expect(lines.join('')).toContain('"url":"http://127.0.0.1');
      expect(lines.join('')).toContain('/hook?key=***&mode=***&***"');
      expect(lines.join('')).not.toMatch(new RegExp(`${KEY}|${TOKEN}`));
    } finally {
      await target.close();
    }
  });

  it('masks the rows written before, whose query was in clear, at the next open; they open to the whole URL, and a backup holds no clear query', async () => {
    const urls = [
      `https://hooks:pa55@crm.example.com/in?key=${KEY}&mode=fast`,
      `https://crm.example.com/in?${TOKEN}`,
      `https://crm.example.com/in?a=1&&b=&c#frag-${KEY}`,
      'https://crm.example.com/plain',
      'redis://:pa55@127.0.0.1:6379/2',
    ];
    const store = await openStore(database);
    const destinations = openDestinations(store, { keyFile });
    const added = [];
    for (const url of urls) added.push((await destinations.add({ account: 'default', url })).destination);
    await store.close();
    // As the previous version left the database: the URL in clear but for its user info, this migration not applied.
    const sql = sqlOn(database);
    for (const [i, url] of urls.entries())
      await sql.query('UPDATE destinations SET url = ? WHERE destination = ?', [withoutCredentials(new URL(url).href), added[i]]);
    await sql.query('DELETE FROM schema_migrations WHERE version = ?', [engine.name === 'postgres' ? 21 : 22]);
    expect(await rows()).toContain(KEY);

    // The next command that opens it migrates it.
    const listed = await cli('list', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).not.toMatch(new RegExp(`${KEY}|${TOKEN}`));
    const byId = new Map(
      (JSON.parse(listed.stdout).destinations as Array<{ destination: string; url: string }>).map((d) => [d.destination, d.url]),
    );
    expect(added.map((id) => byId.get(id))).toEqual(urls.map((url) => maskedUrl(url)));
    expect(await rows()).not.toMatch(new RegExp(`${KEY}|${TOKEN}`));
    const reopened = await openStore(database);
    try {
      const opener = openDestinations(reopened, { keyFile });
      const records = await destinationsOf(reopened).list('default');
      expect(added.map((id) => opener.open(records.find((r) => r.destination === id)!).url)).toEqual(urls.map((url) => new URL(url).href));
    } finally {
      await reopened.close();
    }
    if (engine.name === 'sqlite') {
      const copy = join(tmp.dir, 'backup.db');
      expect((await runCli(['backup', '--db', database, '--to', copy])).code).toBe(0);
      expect(readFileSync(copy).includes(KEY)).toBe(false);
      expect(readFileSync(copy).includes(TOKEN)).toBe(false);
    }
  });
});
