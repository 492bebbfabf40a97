// A backfill into a live application's database: `prequal-hooks replay` and `dead-letters
// reprocess` leave the events to the receiver running on it (a real process whose handler records
// its calls), so that its handlers run for them; --project-here, and a receiver killed long
// enough ago, leave today's behaviour: projected by the command, no handler called. The receivers
// are processes; the commands run in this process (runCli of command-io.ts), another one.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { eventIdentity, type WebhookEvent } from '../../src/events/index.js';
import { openStore } from '../../src/store/open.js';
import { sampleEvent } from '../../src/testing/index.js';
import { FIXTURES, killChildren, readDb, startScript, startServe } from '../support/cli-process.js';
import { runCli } from '../support/command-io.js';
import { postgresUrl } from '../support/engines.js';
import { createDatabase } from '../support/postgres-server.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const APP = fileURLToPath(new URL('../support/recording-app.mjs', import.meta.url));
const tmp = tempDir('prequal-hooks-ownership-');
afterEach(() => killChildren());
afterAll(() => tmp.cleanup());

let files = 0;
/** An NDJSON file of `count` interviews completed, by candidates named `prefix-<n>`. */
function interviews(prefix: string, count: number): { file: string; identities: string[] } {
  const events = Array.from(
    { length: count },
    (_, i) =>
      sampleEvent('candidate.interview.completed', {
        timestamp: new Date(Date.UTC(2026, 10, 20, 10) + i * 1000).toISOString(),
        data: { candidate_id: `${prefix}-${i}`, interview_score: 7 + (i % 3) },
      }) as WebhookEvent,
  );
  const file = join(tmp.dir, `events-${++files}.ndjson`);
  writeFileSync(file, `${events.map((e) => JSON.stringify(e)).join('\n')}\n`);
  return { file, identities: events.map((e) => eventIdentity(e)) };
}

interface Call {
  identity: string;
  kind: string;
  inboxId: number;
  pid: number;
}
const callsIn = (file: string): Call[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Call)
    : [];

/** Waits until the handler was called for every one of `identities` (sorted identities of the calls). */
async function calledFor(callsFile: string, identities: string[], timeoutMs = 10_000): Promise<string[]> {
  return await waitFor(
    () => {
      const called = new Set(callsIn(callsFile).map((c) => c.identity));
      return identities.every((id) => called.has(id)) ? [...called].filter((id) => identities.includes(id)).sort() : undefined;
    },
    timeoutMs,
    'the handler to be called for every replayed event',
  );
}

const sqliteReceivers = (db: string) =>
  readDb(db, (reader) => reader.prepare('SELECT receiver_id, pid, host FROM receivers').all() as Array<{ pid: number; host: string }>);
const inboxStates = (db: string) => readDb(db, (reader) => reader.prepare('SELECT state, COUNT(*) AS n FROM inbox GROUP BY state').all());

describe('prequal-hooks replay into the SQLite database of a running application', () => {
  it('enqueues the events for the running receiver, which projects them and runs its handler for each', async () => {
    const db = join(tmp.dir, 'live.db');
    const callsFile = join(tmp.dir, 'live-calls.ndjson');
    const app = await startScript(APP, [db, callsFile]);
    expect(sqliteReceivers(db)).toEqual([expect.objectContaining({ pid: app.child.pid, host: hostname() })]);

    const { file, identities } = interviews('live', 10);
    const replayed = await runCli(['replay', file, '--db', db, '--json']);
    expect(replayed.code).toBe(0);
    expect(replayed.stderr).toBe('');
    expect(JSON.parse(replayed.stdout)).toEqual({
      received: 10,
      duplicates: 0,
      enqueued: 10,
      projected: 0,
      unknown: 0,
      dead: 0,
      erasures: 0,
      unreadable: [],
      projectedBy: 'owner',
      owner: { receiver_id: expect.any(String), pid: app.child.pid, host: hostname(), started_at: expect.any(String) },
    });
    expect(await calledFor(callsFile, identities)).toEqual([...identities].sort());
    expect(callsIn(callsFile).every((c) => c.pid === app.child.pid && c.kind === 'candidate.interview.completed')).toBe(true);
    await waitFor(
      () => (readDb(db, (r) => r.prepare("SELECT COUNT(*) FROM inbox WHERE state = 'projected'").pluck().get()) === 10 ? true : undefined),
      5000,
      'the ten events projected',
    );
    expect(
      readDb(db, (r) =>
        r.prepare("SELECT COUNT(*) FROM candidates WHERE candidate_id LIKE 'live-%' AND status = 'completed'").pluck().get(),
      ),
    ).toBe(10);

    // The summary line names the receiver; a second replay stores nothing and calls nothing again.
    const again = await runCli(['replay', file, '--db', db]);
    expect(again.stdout).toBe(
      `received 10, duplicates 10, enqueued 0 for the running receiver (pid ${app.child.pid} on host ${hostname()}), dead 0 (${db})\n`,
    );
    // Once the receiver ran its handler for an event replayed after those, it had its chance to
    // (wrongly) run it again for the 10: each was called once.
    const after = interviews('after', 1);
    expect((await runCli(['replay', after.file, '--db', db])).code).toBe(0);
    await calledFor(callsFile, after.identities);
    expect(
      callsIn(callsFile)
        .map((c) => c.identity)
        .sort(),
    ).toEqual([...identities, ...after.identities].sort());
    expect(await app.stop()).toBe(0);
    // A clean stop removes its heartbeat: the next replay projects in its own process.
    expect(sqliteReceivers(db)).toEqual([]);
    const alone = await runCli(['replay', interviews('alone', 2).file, '--db', db, '--json']);
    expect(JSON.parse(alone.stdout)).toMatchObject({ enqueued: 0, projected: 2, projectedBy: 'here', owner: null });
    expect(alone.stderr).toBe('');
  });

  it("--project-here projects in the command, as before: the running receiver's handler is not called", async () => {
    const db = join(tmp.dir, 'here.db');
    const callsFile = join(tmp.dir, 'here-calls.ndjson');
    const app = await startScript(APP, [db, callsFile]);
    const { file } = interviews('here', 5);
    const replayed = await runCli(['replay', file, '--db', db, '--json', '--project-here']);
    expect(replayed.code).toBe(0);
    expect(JSON.parse(replayed.stdout)).toEqual({
      received: 5,
      duplicates: 0,
      enqueued: 0,
      projected: 5,
      unknown: 0,
      dead: 0,
      erasures: 0,
      unreadable: [],
      projectedBy: 'here',
      owner: null,
    });
    expect(replayed.stderr).toBe(
      `prequal-hooks replay: --project-here: projected in this process; the running receiver (pid ${app.child.pid} on host ${hostname()}) does not run its handlers for these events.\n`,
    );
    expect(readDb(db, (r) => r.prepare("SELECT COUNT(*) FROM candidates WHERE candidate_id LIKE 'here-%'").pluck().get())).toBe(5);
    expect(inboxStates(db)).toEqual([{ state: 'projected', n: 5 }]);
    // Once the receiver ran its handler for an event replayed after those (left to it), it had its
    // chance to (wrongly) run it for the 5: it was called for that one only.
    const after = interviews('here-after', 1);
    expect((await runCli(['replay', after.file, '--db', db])).code).toBe(0);
    await calledFor(callsFile, after.identities);
    expect(callsIn(callsFile).map((c) => c.identity)).toEqual(after.identities);
  });

  it('a receiver killed with SIGKILL is no owner once its heartbeat is older than 3 beats: replay projects here and says why', async () => {
    const db = join(tmp.dir, 'killed.db');
    const app = await startScript(APP, [db, join(tmp.dir, 'killed-calls.ndjson'), '200']);
    const pid = app.child.pid;
    expect(sqliteReceivers(db)).toHaveLength(1);
    app.child.kill('SIGKILL');
    await new Promise((resolve) => app.child.once('exit', resolve));
    // Until its last beat is more than 3 of its 200 ms old, as replay judges it (SQLite: this host's clock).
    await waitFor(
      () => {
        const row = readDb(db, (r) => r.prepare('SELECT seen_at, every_ms FROM receivers').get() as { seen_at: number; every_ms: number });
        return Date.now() - row.seen_at > 3 * row.every_ms ? true : undefined;
      },
      10_000,
      "the killed receiver's heartbeat to be 3 beats old",
    );

    const replayed = await runCli(['replay', interviews('killed', 3).file, '--db', db, '--json']);
    expect(replayed.code).toBe(0);
    expect(JSON.parse(replayed.stdout)).toMatchObject({ projected: 3, enqueued: 0, projectedBy: 'here', owner: null });
    expect(replayed.stderr).toMatch(
      new RegExp(
        `^prequal-hooks replay: a receiver on this database \\(pid ${pid} on host ${hostname()}\\) was last seen [\\d.]+ s ago, more than 3 of its 0.2 s heartbeats: it is not counted as running, so the events were projected here and its handlers do not run for them\\.\\n$`,
      ),
    );
    // Its row stays (nobody closed it) until the next receiver starts on the database, which removes it.
    expect(sqliteReceivers(db)).toEqual([expect.objectContaining({ pid })]);
    const next = await startServe(['--db', db, '--allow-unsigned', '--host', '127.0.0.1', '--port', '0']);
    await waitFor(() => (sqliteReceivers(db).length === 1 ? true : undefined), 5000, 'the gone row to be removed');
    expect(sqliteReceivers(db)).toEqual([expect.objectContaining({ pid: next.child.pid })]);
    expect(await next.stop()).toBe(0);
  });

  it('`prequal-hooks serve` is an owner too: it projects what replay enqueued', async () => {
    const db = join(tmp.dir, 'serve.db');
    const serve = await startServe(['--db', db, '--allow-unsigned', '--host', '127.0.0.1', '--port', '0']);
    const replayed = await runCli(['replay', `${FIXTURES}scenarios/campaign-lifecycle.shuffled.ndjson`, '--db', db]);
    expect(replayed.code).toBe(0);
    expect(replayed.stdout).toBe(
      `received 55, duplicates 9, enqueued 46 for the running receiver (pid ${serve.child.pid} on host ${hostname()}), dead 0 (${db})\n`,
    );
    await waitFor(
      () => (readDb(db, (r) => r.prepare("SELECT COUNT(*) FROM inbox WHERE state = 'pending'").pluck().get()) === 0 ? true : undefined),
      10_000,
      'nothing pending',
    );
    expect(readDb(db, (r) => r.prepare('SELECT COUNT(*) FROM candidates').pluck().get())).toBe(14);
    expect(await serve.stop()).toBe(0);
  });
});

describe('prequal-hooks dead-letters reprocess on the database of a running application', () => {
  /** A database holding one dead candidate.interview.completed, its body then mended; its inbox id. */
  async function mendedDeadLetter(db: string, candidateId: string): Promise<number> {
    const replayed = await runCli(['replay', `${FIXTURES}invalid/invalid-data.json`, '--db', db, '--json']);
    expect(JSON.parse(replayed.stdout)).toMatchObject({ dead: 1, projectedBy: 'here' });
    const mended = JSON.parse(readFileSync(`${FIXTURES}invalid/invalid-data.json`, 'utf8'));
    mended.data.candidate_id = candidateId;
    mended.data.interview_score = 8;
    const writer = new Database(db);
    const id = writer.prepare("SELECT inbox_id FROM inbox WHERE state = 'dead'").pluck().get() as number;
    writer.prepare('UPDATE inbox SET raw = ?, codec = 0 WHERE inbox_id = ?').run(Buffer.from(JSON.stringify(mended)), id);
    writer.close();
    return id;
  }

  it('requeues for the running receiver, whose handler is then called for the event', async () => {
    const db = join(tmp.dir, 'reprocess.db');
    const id = await mendedDeadLetter(db, 'mended-1');
    const callsFile = join(tmp.dir, 'reprocess-calls.ndjson');
    const app = await startScript(APP, [db, callsFile]);

    const result = await runCli(['dead-letters', 'reprocess', String(id), '--db', db, '--json']);
    expect(result.code).toBe(0);
    const outcome = JSON.parse(result.stdout);
    expect(outcome).toMatchObject({ requeued: [id], skipped: [], projectedBy: 'owner', owner: { pid: app.child.pid, host: hostname() } });
    expect(outcome.results).toEqual([
      expect.objectContaining({ inbox_id: id, before: 'dead', after: expect.stringMatching(/^(pending|projected)$/) }),
    ]);
    const calls = await waitFor(
      () => {
        const found = callsIn(callsFile).filter((c) => c.inboxId === id);
        return found.length > 0 ? found : undefined;
      },
      5000,
      "the handler's call for the mended event",
    );
    expect(calls).toEqual([expect.objectContaining({ kind: 'candidate.interview.completed', pid: app.child.pid })]);
    expect(readDb(db, (r) => r.prepare('SELECT status, interview_score FROM candidates WHERE candidate_id = ?').get('mended-1'))).toEqual({
      status: 'completed',
      interview_score: 8,
    });

    const table = await runCli(['dead-letters', 'reprocess', String(id), '--db', db, '--table']);
    expect(table.code).toBe(1); // projected now: nothing to reprocess
    expect(table.stdout).toContain('Nothing was requeued.');
  });

  it('says so on a terminal table, and --project-here processes in the command without calling the handler', async () => {
    const db = join(tmp.dir, 'reprocess-here.db');
    const id = await mendedDeadLetter(db, 'mended-2');
    const callsFile = join(tmp.dir, 'reprocess-here-calls.ndjson');
    const app = await startScript(APP, [db, callsFile]);

    const here = await runCli(['dead-letters', 'reprocess', String(id), '--db', db, '--table', '--project-here']);
    expect(here.code).toBe(0);
    expect(here.stdout).toMatch(new RegExp(`^\\s*${id}\\s+candidate\\.interview\\.completed\\s+dead\\s+projected`, 'm'));
    expect(here.stdout).toContain('Requeued and processed 1: 1 projected, 0 still set aside.');
    expect(here.stderr).toContain(
      `--project-here: projected in this process; the running receiver (pid ${app.child.pid} on host ${hostname()})`,
    );

    // Set aside again by hand, then reprocessed by the owner: the table says who takes it.
    const writer = new Database(db);
    writer.prepare("UPDATE inbox SET state = 'dead' WHERE inbox_id = ?").run(id);
    writer.close();
    const owned = await runCli(['dead-letters', 'reprocess', String(id), '--db', db, '--table']);
    expect(owned.code).toBe(0);
    expect(owned.stdout).toContain(
      `Requeued 1 for the running receiver (pid ${app.child.pid} on host ${hostname()}), which projects them and runs its handlers;`,
    );
    // Called once, for the requeue, once it came: never for the --project-here run before it.
    await waitFor(
      () => (callsIn(callsFile).some((c) => c.inboxId === id) ? true : undefined),
      5000,
      "the handler's call for the requeued event",
    );
    expect(callsIn(callsFile)).toEqual([
      expect.objectContaining({ inboxId: id, pid: app.child.pid, kind: 'candidate.interview.completed' }),
    ]);
  });
});

describe.skipIf(postgresUrl() === '')('prequal-hooks replay into the PostgreSQL database of a running application', () => {
  it('enqueues for the running receiver (a replica), whose handler is called for each event', async () => {
    const url = await createDatabase(postgresUrl(), `own_${process.pid}_${Date.now()}`);
    const callsFile = join(tmp.dir, 'pg-calls.ndjson');
    const app = await startScript(APP, [url, callsFile]);
    const { file, identities } = interviews('pg', 12);

    const replayed = await runCli(['replay', file, '--db', url, '--json']);
    expect(replayed.code).toBe(0);
    expect(JSON.parse(replayed.stdout)).toMatchObject({
      received: 12,
      enqueued: 12,
      projected: 0,
      projectedBy: 'owner',
      owner: { pid: app.child.pid, host: hostname() },
    });
    expect(await calledFor(callsFile, identities)).toEqual([...identities].sort());

    const store = await openStore(url);
    try {
      expect(await store.counts()).toMatchObject({ pending: 0, projected: 12 });
      expect(await store.handlerFailures(0, 10)).toEqual([]);
      expect(await app.stop()).toBe(0);
      expect(await store.receivers()).toEqual([]);
    } finally {
      await store.close();
    }
    const here = await runCli(['replay', interviews('pg-here', 2).file, '--db', url, '--json']);
    expect(JSON.parse(here.stdout)).toMatchObject({ projected: 2, projectedBy: 'here', owner: null });
  });
});
