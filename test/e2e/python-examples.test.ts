// The Python examples of docs/changes.md and docs/destinations.md (standard library only), kept
// verbatim in the pages, run with python3 as a reader copies them: against a real `serve`, the
// page loop with its cursor file (a second run goes on where the first stopped; a 409 and a 410
// make it read the state again and go on from the cursor the answer gives), the server-sent events
// reader (live, and across a restart of serve resumed by Last-Event-ID, each change once), and a
// destination's receiver checking the signatures of real deliveries, a rotated secret's too.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/index.js';
import { signatureHeader } from '../../src/destinations/signing.js';
import { storePorts } from '../../src/store/store.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { killChildren, startServe, type ServeProcess } from '../support/cli-process.js';
import { runCli } from '../support/command-io.js';
import { findExecutable, needs } from '../support/needs.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const PAGES = 'test/examples/python/feed_pages.py';
const EVENTS = 'test/examples/python/feed_events.py';
const RECEIVER = 'test/examples/python/destination_receiver.py';

const PYTHON = findExecutable(['python3']);
const hasPython = needs('python3', PYTHON !== undefined, {
  install: '`apt-get install -y python3`',
  untested: 'the Python examples of docs/changes.md and docs/destinations.md',
});

const SECRET = 'whsec_python_examples_4d1a';
const FEED = 'feed-token-python-examples-7c3e';

describe('the Python examples of docs/', () => {
  it.each([
    ['docs/changes.md', PAGES],
    ['docs/changes.md', EVENTS],
    ['docs/destinations.md', RECEIVER],
  ])('%s holds %s verbatim', (page, file) => {
    expect(read(page)).toContain(`\`\`\`python\n${read(file)}\`\`\`\n`);
  });
});

/** A Python example running: what it printed so far, the seqs it applied in order, and a kill. */
interface Running {
  stdout: () => string;
  stderr: () => string;
  applied: () => number[];
  kill: () => void;
  exited: Promise<number | null>;
}

const appliedIn = (stdout: string) => [...stdout.matchAll(/^applied (\d+) /gm)].map((match) => Number(match[1]));

const pythons = new Set<ChildProcess>();

function startPython(file: string, env: Record<string, string>): Running {
  const child = spawn(PYTHON!, [file], {
    cwd: new URL('../..', import.meta.url),
    env: { ...process.env, PYTHONUNBUFFERED: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  pythons.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { stdout: () => stdout, stderr: () => stderr, applied: () => appliedIn(stdout), kill: () => child.kill('SIGKILL'), exited };
}

/** Runs an example that ends by itself (the page loop) to its end. */
function runPython(file: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      PYTHON!,
      [file],
      { cwd: new URL('../..', import.meta.url), env: { ...process.env, ...env }, timeout: 20_000 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : ((error.code as number | undefined) ?? null), stdout, stderr }),
    );
  });
}

describe.skipIf(!hasPython)('the Python examples against serve', () => {
  const tmp = tempDir('prequal-hooks-python-');
  const db = () => join(tmp.dir, 'hooks.db');
  let serve: ServeProcess;
  let port = 0;
  const serveArgs = () => ['--port', String(port), '--host', '127.0.0.1', '--db', db(), '--secret', SECRET, '--feed-token', FEED];
  const cursorFile = (name: string) => join(tmp.dir, `${name}.cursor`);
  const feedEnv = (cursor: string) => ({ PREQUAL_FEED_URL: serve.baseUrl, PREQUAL_FEED_TOKEN: FEED, PREQUAL_CURSOR_FILE: cursor });
  const savedCursor = (cursor: string) => Number(readFileSync(cursor, 'utf8'));
  const head = async () => {
    const answer = await fetch(`${serve.baseUrl}/changes?limit=1000`, { headers: { Authorization: `Bearer ${FEED}` } });
    return ((await answer.json()) as { next: number }).next;
  };
  /** Posts a signed event that changes the credits, and waits for its change: the new head. */
  let credits = 100;
  const newChange = async () => {
    const before = await head();
    credits -= 1;
    const event = sampleEvent('credits.low', {
      timestamp: `2026-11-28T10:00:${String(100 - credits).padStart(2, '0')}Z`,
      data: { credits_remaining: credits },
    });
    const request = signedRequest(JSON.stringify(event), { secret: SECRET });
    expect((await fetch(serve.webhookUrl, { method: 'POST', headers: request.headers, body: request.body })).status).toBe(200);
    return await waitFor(async () => ((await head()) > before ? await head() : undefined), 5000, 'the change of the event');
  };

  beforeAll(async () => {
    serve = await startServe(serveArgs());
    port = Number(new URL(serve.baseUrl).port);
    for (const kind of ['campaign.created', 'candidate.added', 'candidate.sourced'] as const) {
      const request = signedRequest(JSON.stringify(sampleEvent(kind)), { secret: SECRET });
      expect((await fetch(serve.webhookUrl, { method: 'POST', headers: request.headers, body: request.body })).status).toBe(200);
    }
    await newChange();
  });
  afterAll(() => {
    for (const child of pythons) child.kill('SIGKILL');
    killChildren();
    tmp.cleanup();
  });

  it('the page loop applies every change and saves its cursor; the next run applies only what came since', async () => {
    const cursor = cursorFile('pages');
    const last = await head();
    const first = await runPython(PAGES, feedEnv(cursor));
    expect(first.code, first.stderr).toBe(0);
    expect(appliedIn(first.stdout)).toEqual(Array.from({ length: last }, (_, i) => i + 1));
    expect(first.stdout).not.toContain('reading the state again');
    expect(savedCursor(cursor)).toBe(last);
    const added = await newChange();
    const second = await runPython(PAGES, feedEnv(cursor));
    expect(second.code, second.stderr).toBe(0);
    expect(appliedIn(second.stdout)).toEqual([added]);
    expect(savedCursor(cursor)).toBe(added);
  });

  it('the page loop, given a cursor past the head (a restored database), reads the state again and goes on from the head', async () => {
    const cursor = cursorFile('pages-ahead');
    const last = await head();
    writeFileSync(cursor, String(last + 5));
    const run = await runPython(PAGES, feedEnv(cursor));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`reading the state again: the cursor ${last + 5} is after the last change recorded, ${last}`);
    expect(appliedIn(run.stdout)).toEqual([]);
    expect(savedCursor(cursor)).toBe(last);
  });

  it('the events reader applies what came after its cursor, follows live, and across a restart of serve resumes by Last-Event-ID', async () => {
    const cursor = cursorFile('events');
    writeFileSync(cursor, '2');
    const reader = startPython(EVENTS, feedEnv(cursor));
    try {
      let last = await head();
      await waitFor(() => reader.applied().includes(last), 10_000, `the events reader's change ${last}`);
      last = await newChange();
      await waitFor(() => reader.applied().includes(last), 5000, 'the change committed while it follows');
      expect(await serve.stop()).toBe(0);
      serve = await startServe(serveArgs());
      last = await newChange();
      await waitFor(() => reader.applied().includes(last), 10_000, 'the change committed after the restart');
      // Each change once, in order, from the one after the cursor: the reconnection sent Last-Event-ID.
      expect(reader.applied()).toEqual(Array.from({ length: last - 2 }, (_, i) => i + 3));
      expect(savedCursor(cursor)).toBe(last);
      expect(reader.stdout()).not.toContain('reading the state again');
    } finally {
      reader.kill();
    }
    const ahead = cursorFile('events-ahead');
    writeFileSync(ahead, String((await head()) + 5));
    const resumed = startPython(EVENTS, feedEnv(ahead));
    try {
      await waitFor(() => resumed.stdout().includes('reading the state again: the cursor'), 10_000, 'the 409 read again');
      await waitFor(async () => savedCursor(ahead) === (await head()), 5000, 'the cursor at the head');
    } finally {
      resumed.kill();
    }
  });

  it("the destination's receiver verifies real deliveries (also signed by a rotated secret beside its previous one) and refuses forged ones", async () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const receiver = startPython(RECEIVER, { PREQUAL_DESTINATION_SECRET: secret, PORT: '0' });
    try {
      const listening = await waitFor(
        () => /receiving changes on port (\d+)/.exec(receiver.stdout())?.[1],
        10_000,
        'the receiver listening',
      );
      const url = `http://127.0.0.1:${listening}`;
      const added = await runCli(['destinations', 'add', '--db', db(), '--url', `${url}/prequal`, '--secret', secret, '--json']);
      expect(added.code, added.stderr).toBe(0);
      const { destination } = JSON.parse(added.stdout) as { destination: string };
      const delivered = await newChange();
      await waitFor(() => receiver.applied().includes(delivered), 10_000, 'the delivery verified and applied');
      const next = `whsec_${randomBytes(32).toString('base64')}`;
      const rotated = await runCli(['destinations', 'rotate-secret', '--db', db(), '--destination', destination, '--secret', next]);
      expect(rotated.code, rotated.stderr).toBe(0);
      const signedByBoth = await newChange();
      await waitFor(() => receiver.applied().includes(signedByBoth), 10_000, 'the delivery signed by both secrets, verified');

      const body = JSON.stringify({
        account: 'default',
        seq: 999,
        entity: 'credits',
        id: 'default',
        op: 'upsert',
        row: null,
        at: '',
        events: [],
      });
      const now = Math.floor(Date.now() / 1000);
      const send = (headers: Record<string, string>) => fetch(`${url}/prequal`, { method: 'POST', headers, body });
      const signed = (id: string, timestamp: number, key = secret) => ({
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader([key], id, timestamp, body),
      });
      expect((await send(signed('msg_wrong_key', now, next))).status).toBe(401);
      expect((await send(signed('msg_stale', now - 600))).status).toBe(401);
      expect((await send({ 'webhook-id': 'msg_unsigned' })).status).toBe(401);
      expect((await send(signed('msg_good', now))).status).toBe(204);
      expect((await send(signed('msg_good', now))).status).toBe(204);
      await waitFor(() => receiver.applied().includes(999), 5000, 'the request signed by hand, applied');
      expect(receiver.applied().filter((seq) => seq === 999)).toHaveLength(1);
    } finally {
      receiver.kill();
    }
  });

  it('once retention dropped changes after their cursor, both readers read the state again and go on from the oldest kept', async () => {
    const store = await openStore(db());
    try {
      // A `before` in the future: every change recorded so far goes, as retention would drop them 30 days on.
      expect(await storePorts(store).pruneChanges('2999-01-01T00:00:00.000Z', 1000)).toBeGreaterThan(1);
    } finally {
      await store.close();
    }
    const last = await head();
    const pages = cursorFile('pages-dropped');
    writeFileSync(pages, '1');
    const run = await runPython(PAGES, feedEnv(pages));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('reading the state again: the changes after 1 were dropped by retention');
    expect(savedCursor(pages)).toBe(last);
    const events = cursorFile('events-dropped');
    writeFileSync(events, '1');
    const reader = startPython(EVENTS, feedEnv(events));
    try {
      await waitFor(() => reader.stdout().includes('reading the state again: the changes after 1'), 10_000, 'the 410 read again');
      const added = await newChange();
      await waitFor(() => reader.applied().includes(added), 10_000, 'the next change, followed from the oldest kept');
      expect(reader.applied()).toEqual([added]);
    } finally {
      reader.kill();
    }
  });
});
