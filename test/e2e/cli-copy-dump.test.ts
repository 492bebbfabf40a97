// Moving a receiver from SQLite to PostgreSQL and back, and dumping what it received, as an
// operator does it: the real `prequal-hooks` processes (serve, copy, dump, replay) on a real SQLite
// file and a real PostgreSQL. The source holds two accounts, a destination part-way through its
// changes with a delivery set aside, dead letters, an erased person and a change log whose prefix
// retention dropped; serve on the copy goes on where serve on the original stopped.
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/index.js';
import { storePorts } from '../../src/store/store.js';
import { sampleEvent, sendSigned } from '../../src/testing/index.js';
import { FIXTURES, killChildren, runCliProcess, startServe } from '../support/cli-process.js';
import { runCli } from '../support/command-io.js';
import { ENGINES } from '../support/engines.js';
import { listen, tempDir } from '../support/servers.js';
import { sqlOn } from '../support/sql.js';
import { readAccountRows, readStoreTables } from '../support/tables.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'whsec_copy-dump-default-account-secret-5b1e';
const ACME_SECRET = 'whsec_copy-dump-acme-account-secret-77c0a1';
const ERASED = { id: 'f332892f-d38e-44df-8ebf-7c9f49065885', email: 'eloise.marchand@gmail.com', name: 'Marchand' };

const tmp = tempDir('prequal-hooks-copy-');
afterAll(() => {
  killChildren();
  tmp.cleanup();
});

const postgres = ENGINES.find((e) => e.name === 'postgres');

/** A recorder of a destination's deliveries: the seq of each, answered `status(seq, entity id)`. */
async function recorder(status: (body: { seq: number; id: string }) => number) {
  const received: Array<{ seq: number; id: string; account: string; status: number }> = [];
  const server = await listen(async (req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    const body = JSON.parse(raw) as { seq: number; id: string; account: string };
    const answer = status(body);
    received.push({ seq: body.seq, id: body.id, account: body.account, status: answer });
    res.writeHead(answer).end();
  });
  return { received, url: server.url, close: server.close };
}

function ndjson(name: string, events: unknown[]): string {
  const path = join(tmp.dir, name);
  writeFileSync(path, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  return path;
}

const added = (id: string, minute: number) =>
  sampleEvent('candidate.added', {
    timestamp: `2026-11-20T10:${String(minute).padStart(2, '0')}:00Z`,
    data: { candidate_id: id, email: `${id}@example.org` },
  });

describe.skipIf(postgres === undefined)('copy SQLite to PostgreSQL, serve on it, dump it, copy it back', () => {
  const source = join(tmp.dir, 'source.db');
  const keyFile = `${source}.accounts-key`;

  it('carries every account, the destination where it stood, the change numbering and the erasure, and serve goes on from there', async () => {
    // The source: the default account's campaign (dead letters and an unknown kind among it), acme's events.
    expect((await runCli(['replay', '--db', source, `${FIXTURES}scenarios/campaign-lifecycle.ndjson`, `${FIXTURES}invalid`])).code).toBe(0);
    const acme = await runCli(['accounts', 'add', '--db', source, '--account', 'acme', '--secret', ACME_SECRET, '--json']);
    expect(acme.code, acme.stderr).toBe(0);
    const acmePath = (JSON.parse(acme.stdout) as { webhookPath: string }).webhookPath;
    expect(
      (await runCli(['replay', '--db', source, '--account', 'acme', ndjson('acme.ndjson', [added('acme-1', 1), added('acme-2', 2)])])).code,
    ).toBe(0);
    // Retention drops the change log so far; then a person is erased (an erase change after the dropped prefix).
    const store = await openStore(source);
    try {
      expect(await storePorts(store).pruneChanges('2999-01-01T00:00:00.000Z', 1000)).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
    expect((await runCli(['erase', '--db', source, '--candidate', ERASED.id, '--reason', 'request'])).code).toBe(0);

    // A destination, delivered part-way by serve on SQLite: cand-a delivered, cand-dead set aside.
    const first = await recorder((body) => (body.id === 'cand-dead' ? 500 : 200));
    afterAll(() => first.close());
    const destination = await runCli([
      'destinations',
      'add',
      '--db',
      source,
      '--url',
      `${first.url}/in`,
      '--retry-schedule',
      '0s,50ms',
      '--json',
    ]);
    expect(destination.code, destination.stderr).toBe(0);
    const sqliteServe = await startServe(['--db', source, '--port', '0', '--host', '127.0.0.1', '--secret', SECRET]);
    expect((await sendSigned(sqliteServe.webhookUrl, added('cand-a', 10), { secret: SECRET })).status).toBe(200);
    expect((await sendSigned(sqliteServe.webhookUrl, added('cand-dead', 11), { secret: SECRET })).status).toBe(200);
    await waitFor(
      () => first.received.filter((r) => r.id === 'cand-dead').length === 2 && first.received.some((r) => r.id === 'cand-a'),
      10_000,
      'a delivery and a dead one',
    );
    expect(await sqliteServe.stop('SIGTERM')).toBe(0);
    // While no receiver runs, more changes: after the destination's cursor, not yet sent.
    expect((await runCli(['replay', '--db', source, ndjson('later.ndjson', [added('cand-b', 12), added('cand-c', 13)])])).code).toBe(0);
    const sent = first.received.filter((r) => r.status === 200).map((r) => r.seq);

    // The copy, by the real process.
    const { database: target } = await postgres!.fresh();
    const copied = await runCliProcess(['copy', '--from', source, '--to', target, '--json']);
    expect(copied.code, copied.stderr).toBe(0);
    const report = JSON.parse(copied.stdout) as { tables: Record<string, number>; sealedChecked: number };
    expect(report.tables).toMatchObject({ accounts: 1, account_secrets: 1, destinations: 1, erasures: 1 });
    expect(report.sealedChecked).toBe(2); // acme's secret and the destination's
    for (const account of ['default', 'acme'])
      expect(await readAccountRows(target, account)).toEqual(await readAccountRows(source, account));
    // The counters behind /metrics and inspect: counted again at the target, the same figures.
    const counters = (db: string) =>
      sqlOn(db).query(
        'SELECT account, name, key, SUM(n) AS n, SUM(total) AS total FROM counters GROUP BY account, name, key HAVING SUM(n) <> 0 OR SUM(total) <> 0 ORDER BY account, name, key',
      );
    expect((await counters(target)).map((r) => ({ ...r, n: Number(r.n), total: Number(r.total) }))).toEqual(
      (await counters(source)).map((r) => ({ ...r, n: Number(r.n), total: Number(r.total) })),
    );
    const heads = (db: string) => sqlOn(db).query('SELECT account, last_seq, dropped_through FROM change_heads ORDER BY account');
    expect(await heads(target)).toEqual(await heads(source));
    const head = (await heads(source)).find((h) => h.account === 'default') as { dropped_through: number; last_seq: number };
    const last = head.last_seq;
    expect(head.dropped_through).toBeGreaterThan(0);
    // A second copy into it is refused, and writes nothing.
    const again = await runCliProcess(['copy', '--from', source, '--to', target]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/holds events.*Nothing was written/);

    // serve on PostgreSQL goes on: the destination sends what came after its cursor, once, and nothing it sent before.
    const before = first.received.length;
    const later = () => first.received.slice(before);
    const pgServe = await startServe([
      '--db',
      target,
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--secret',
      SECRET,
      '--accounts-key-file',
      keyFile,
    ]);
    try {
      await waitFor(() => later().some((r) => r.id === 'cand-c'), 10_000, 'the changes after the cursor delivered');
      const resent = later().map((r) => r.seq);
      expect(resent.filter((seq) => sent.includes(seq))).toEqual([]);
      expect(new Set(resent).size).toBe(resent.length);
      expect(later().map((r) => r.id)).toEqual(['cand-b', 'cand-c']);
      // An event the source received is a duplicate here; the next change is numbered after the last.
      const redelivered = await sendSigned(pgServe.webhookUrl, added('cand-a', 10), { secret: SECRET });
      expect(redelivered.status).toBe(200);
      expect(redelivered.body).toMatchObject({ duplicate: true });
      expect((await sendSigned(pgServe.webhookUrl, added('cand-d', 14), { secret: SECRET })).status).toBe(200);
      await waitFor(() => later().some((r) => r.id === 'cand-d'), 10_000, 'the new change delivered');
      expect(later().at(-1)!.seq).toBe(last + 1);
      // acme's webhook path and secret (sealed, copied as they were) still verify.
      expect((await sendSigned(`${pgServe.baseUrl}${acmePath}`, added('acme-3', 3), { secret: ACME_SECRET })).status).toBe(200);
    } finally {
      expect(await pgServe.stop('SIGTERM')).toBe(0);
    }

    // dump of PostgreSQL into replay gives the same state and the same erasure: the erased person's
    // id is in the erasure line and their redacted bodies, none of their values anywhere.
    const dumped = await runCliProcess(['dump', '--db', target]);
    expect(dumped.code, dumped.stderr).toBe(0);
    const lines = dumped.stdout.split('\n').slice(0, -1);
    const stored = await sqlOn(target).query<{ n: string }>("SELECT COUNT(*) AS n FROM inbox WHERE account = 'default'");
    expect(lines).toHaveLength(1 + Number(stored[0]!.n));
    expect(JSON.parse(lines[0]!)).toMatchObject({ 'prequal-hooks:erasure': { candidate_id: ERASED.id } });
    expect(dumped.stdout).not.toContain(ERASED.email);
    expect(dumped.stdout).not.toContain(ERASED.name);
    const dumpFile = join(tmp.dir, 'dump.ndjson');
    writeFileSync(dumpFile, dumped.stdout);
    const replayed = join(tmp.dir, 'replayed.db');
    expect((await runCliProcess(['replay', '--db', replayed, dumpFile])).code).toBe(0);
    expect(await readStoreTables(replayed, { account: 'default' })).toEqual(await readStoreTables(target, { account: 'default' }));
    const erasures = async (db: string) =>
      (
        await sqlOn(db).query<{ candidate_id: string; erased_at: string | Date }>(
          "SELECT candidate_id, erased_at FROM erasures WHERE account = 'default'",
        )
      ).map((r) => [r.candidate_id, new Date(r.erased_at).toISOString()]);
    expect(await erasures(replayed)).toEqual(await erasures(target));
    expect(await erasures(replayed)).toHaveLength(1);

    // And back: PostgreSQL to a new SQLite file, row for row.
    const back = join(tmp.dir, 'back.db');
    const returned = await runCliProcess(['copy', '--from', target, '--to', back, '--accounts-key-file', keyFile]);
    expect(returned.code, returned.stderr).toBe(0);
    for (const account of ['default', 'acme']) expect(await readAccountRows(back, account)).toEqual(await readAccountRows(target, account));
    expect(await heads(back)).toEqual(await heads(target));
  }, 120_000);
});
