// The change feed of `serve` (docs/changes.md) with the real process: GET /changes by page and as
// server-sent events, its tokens, its cursor, 410 once retention dropped what a cursor had not
// reached, 409 for a cursor past the last change, and `prequal-hooks changes`, as an ATS syncing
// by cursor would use them.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/index.js';
import { storePorts } from '../../src/store/store.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { CLI, cliEnv, killChildren, runCliProcess, startServe, type ServeProcess } from '../support/cli-process.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';
import { serverSentChanges, type WireChange } from '../support/server-sent-events.js';

const SECRET = 'whsec_serve_changes_7a1c';
const FULL = 'full-token-changes-4b8e2d';
const READ_ONLY = 'read-only-token-changes-9c1f';
const METRICS = 'metrics-token-changes-2e7a';
const FEED = 'feed-token-changes-6d3b0f';
const CAMPAIGN = 'cmp_feed';
const PERSON = { first_name: 'Anouk', last_name: 'Lemaire', email: 'anouk.lemaire@example.org' };

const as = (token: string, extra: Record<string, string> = {}) => ({ Authorization: `Bearer ${token}`, ...extra });

describe('serve --feed-token: GET /changes', () => {
  const tmp = tempDir();
  const db = () => join(tmp.dir, 'changes.db');
  let serve: ServeProcess;

  const post = async (event: object) => {
    const request = signedRequest(JSON.stringify(event), { secret: SECRET });
    expect((await fetch(serve.webhookUrl, { method: 'POST', headers: request.headers, body: request.body })).status).toBe(200);
  };
  const get = async (path: string, token: string, extra: Record<string, string> = {}) => {
    const answer = await fetch(`${serve.baseUrl}${path}`, { headers: as(token, extra) });
    return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
  };
  const page = async (query: string) => {
    const answer = await get(`/changes${query}`, FEED);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body as { changes: WireChange[]; next: number };
  };

  beforeAll(async () => {
    serve = await startServe(
      ['--port', '0', '--host', '127.0.0.1', '--db', db(), '--secret', SECRET, '--dashboard-token', FULL, '--feed-token', FEED],
      { PREQUAL_HOOKS_DASHBOARD_READONLY_TOKEN: READ_ONLY, PREQUAL_HOOKS_METRICS_TOKEN: METRICS },
    );
    await post(sampleEvent('campaign.created', { timestamp: '2026-03-01T09:00:00Z', data: { campaign_id: CAMPAIGN } }));
    for (let i = 1; i <= 4; i += 1)
      await post(
        sampleEvent('candidate.added', {
          timestamp: `2026-03-01T09:0${i}:00Z`,
          data: { campaign_id: CAMPAIGN, candidate_id: `cand-feed-${i}`, ...PERSON, email: `feed-${i}@example.org` },
        }),
      );
    await waitFor(async () => ((await page('?limit=1000')).changes.length >= 5 ? true : undefined), 5000, 'the five changes');
  });
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });

  it('the feed token opens GET /changes and nothing else; the dashboard token opens it; the read-only and metrics tokens never', async () => {
    expect((await get('/changes', FEED)).status).toBe(200);
    expect((await get('/changes', FULL)).status).toBe(200);
    for (const token of [READ_ONLY, METRICS]) {
      const refused = await get('/changes', token);
      expect(refused.status).toBe(403);
      expect((refused.body.error as { code: string }).code).toBe('FORBIDDEN');
      expect(JSON.stringify(refused.body)).not.toContain('feed-1@example.org');
    }
    const none = await fetch(`${serve.baseUrl}/changes`);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    for (const path of ['/metrics', '/dashboard/'])
      expect((await fetch(`${serve.baseUrl}${path}`, { headers: as(FEED) })).status).toBe(403);
  });

  it('pages in seq order from the oldest kept; next is the last seq given, or after itself on an empty page', async () => {
    const all = await page('');
    expect(all.changes.map((c) => c.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(all.next).toBe(5);
    expect(all.changes[0]).toMatchObject({ entity: 'campaign', id: CAMPAIGN, op: 'upsert', events: [expect.any(String)] });
    expect(all.changes[1]).toMatchObject({ entity: 'candidate', id: 'cand-feed-1', row: { email: 'feed-1@example.org' } });
    const first = await page('?limit=2');
    expect([first.changes.map((c) => c.seq), first.next]).toEqual([[1, 2], 2]);
    const second = await page(`?after=${first.next}&limit=2`);
    expect([second.changes.map((c) => c.seq), second.next]).toEqual([[3, 4], 4]);
    const end = await page('?after=5&account=default');
    expect(end).toEqual({ changes: [], next: 5 });
  });

  it('answers 400 for a bad parameter and 404 for an unknown account, in the envelope', async () => {
    for (const query of ['?after=-1', '?after=abc', '?limit=0', '?limit=1001', '?account=Not%20An%20Id']) {
      const answer = await get(`/changes${query}`, FEED);
      expect(answer.status, query).toBe(400);
      expect((answer.body.error as { code: string }).code, query).toBe('VALIDATION_ERROR');
    }
    const unknown = await get('/changes?account=nobody', FEED);
    expect(unknown.status).toBe(404);
    expect((unknown.body.error as { code: string }).code).toBe('RESOURCE_NOT_FOUND');
  });

  it('answers 409 CURSOR_AHEAD with the head for a cursor past the last change (a restored database), as a page, a stream and the CLI', async () => {
    const head = (await page('?limit=1000')).next;
    expect((await page(`?after=${head}`)).changes).toEqual([]);
    const ahead = await get(`/changes?after=${head + 1}`, FEED);
    expect(ahead.status).toBe(409);
    expect(ahead.body).toMatchObject({ error: { code: 'CURSOR_AHEAD', details: { after: head + 1, head } }, head });
    expect((ahead.body.error as { message: string }).message).toContain(`read the projected state again, then follow from ${head}`);
    const stream = await fetch(`${serve.baseUrl}/changes`, {
      headers: as(FEED, { Accept: 'text/event-stream', 'Last-Event-ID': String(head + 7) }),
    });
    expect(stream.status).toBe(409);
    expect(((await stream.json()) as { head: number }).head).toBe(head);
    const cli = await runCliProcess(['changes', '--db', db(), '--after', String(head + 1)]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(`the cursor ${head + 1} is after the last change recorded, ${head}`);
  });

  it('streams the changes after Last-Event-ID, then follows: an erasure made by the CLI arrives within 2 s', async () => {
    const controller = new AbortController();
    const answer = await fetch(`${serve.baseUrl}/changes`, {
      headers: as(FEED, { Accept: 'text/event-stream', 'Last-Event-ID': '3' }),
      signal: controller.signal,
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/event-stream');
    const events = serverSentChanges(answer.body!);
    const seen: Array<{ id: string | undefined; data: WireChange }> = [];
    for (let i = 0; i < 2; i += 1) seen.push((await events.next()).value as (typeof seen)[number]);
    expect(seen.map((e) => [e.id, e.data.seq])).toEqual([
      ['4', 4],
      ['5', 5],
    ]);
    const erased = await runCliProcess(['erase', '--db', db(), '--candidate', 'cand-feed-2', '--reason', 'request']);
    expect(erased.code, erased.stderr).toBe(0);
    const started = Date.now();
    const erase = (await events.next()).value as (typeof seen)[number];
    expect(Date.now() - started).toBeLessThan(2000);
    expect(erase.data).toMatchObject({ entity: 'candidate', id: 'cand-feed-2', op: 'erase', row: null });
    controller.abort();
    // The erasure redacted the person's earlier change: the page shows only the keys.
    const redacted = (await page('')).changes.find((c) => c.id === 'cand-feed-2' && c.op === 'upsert');
    expect(redacted?.row).toEqual({ candidate_id: 'cand-feed-2', campaign_id: CAMPAIGN });
  });

  it('prequal-hooks changes prints ndjson after a cursor, and --follow prints a later change until SIGTERM', async () => {
    const printed = await runCliProcess(['changes', '--db', db(), '--after', '4', '--json']);
    expect(printed.code, printed.stderr).toBe(0);
    const lines = printed.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as WireChange);
    expect(lines[0]!.seq).toBe(5);
    expect(lines.at(-1)).toMatchObject({ op: 'erase', id: 'cand-feed-2' });
    const readable = await runCliProcess(['changes', '--db', db(), '--after', '5', '--table']);
    expect(readable.stdout).toMatch(/^6\t\S+\terase candidate cand-feed-2/);

    const last = lines.at(-1)!.seq;
    const follower = spawn(process.execPath, [CLI, 'changes', '--db', db(), '--after', String(last), '--follow', '--json'], {
      env: cliEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    follower.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const exited = new Promise<number | null>((resolve) => follower.once('exit', resolve));
    await post(
      sampleEvent('candidate.added', {
        timestamp: '2026-03-01T10:00:00Z',
        data: { campaign_id: CAMPAIGN, candidate_id: 'cand-feed-5', ...PERSON, email: 'feed-5@example.org' },
      }),
    );
    const followed = await waitFor(
      () => (out.includes('\n') ? (JSON.parse(out.split('\n')[0]!) as WireChange) : undefined),
      5000,
      'the followed change',
    );
    expect(followed).toMatchObject({ seq: last + 1, id: 'cand-feed-5', row: { email: 'feed-5@example.org' } });
    follower.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('answers 410 with the oldest seq kept once retention dropped changes after the cursor, never for a cursor at or past them', async () => {
    const store = await openStore(db());
    try {
      const last = (await page('?limit=1000')).next;
      // A `before` in the future: every change recorded so far goes, as retention would drop them 30 days on.
      expect(await storePorts(store).pruneChanges('2999-01-01T00:00:00.000Z', 1000)).toBe(last);
    } finally {
      await store.close();
    }
    const dropped = await get('/changes?after=2', FEED);
    expect(dropped.status).toBe(410);
    expect(dropped.body).toMatchObject({ error: { code: 'CHANGES_DROPPED' }, oldest: expect.any(Number) });
    const oldest = dropped.body.oldest as number;
    expect((await page(`?after=${oldest - 1}`)).changes).toEqual([]);
    const stream = await fetch(`${serve.baseUrl}/changes`, { headers: as(FEED, { Accept: 'text/event-stream', 'Last-Event-ID': '1' }) });
    expect(stream.status).toBe(410);
    const cli = await runCliProcess(['changes', '--db', db(), '--after', '1']);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain('dropped by retention');
  });
  it('keeps 64 streams open at most: the next one gets 503 BUSY, and a place freed is taken again', async () => {
    const controllers = Array.from({ length: 64 }, () => new AbortController());
    const open = (signal?: AbortSignal) =>
      fetch(`${serve.baseUrl}/changes`, { headers: as(FEED, { Accept: 'text/event-stream' }), ...(signal && { signal }) });
    const streams = await Promise.all(controllers.map((controller) => open(controller.signal)));
    expect(new Set(streams.map((s) => s.status))).toEqual(new Set([200]));
    const refused = await open();
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('BUSY');
    controllers[0]!.abort();
    const again = await waitFor(
      async () => {
        const controller = new AbortController();
        controllers.push(controller);
        const answer = await open(controller.signal);
        if (answer.status === 200) return answer;
        await answer.body?.cancel();
        return undefined;
      },
      5000,
      'a place freed by a closed stream',
    );
    expect(again.status).toBe(200);
    for (const controller of controllers) controller.abort();
  });

  it('SIGTERM ends the open streams: serve stops at once and exits 0', async () => {
    const streams = await Promise.all(
      [1, 2].map(() => fetch(`${serve.baseUrl}/changes`, { headers: as(FEED, { Accept: 'text/event-stream' }) })),
    );
    expect(streams.map((s) => s.status)).toEqual([200, 200]);
    const ended = streams.map(async (s) => {
      for await (const _chunk of s.body as unknown as AsyncIterable<Uint8Array>);
      return 'ended';
    });
    expect(await serve.stop('SIGTERM', 8000)).toBe(0);
    expect(await Promise.all(ended)).toEqual(['ended', 'ended']);
  });
});

describe('serve without a feed or dashboard token', () => {
  const tmp = tempDir();
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });

  it('does not serve /changes (404, as /metrics without its tokens), whatever the read-only token', async () => {
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', join(tmp.dir, 'closed.db'), '--secret', SECRET], {
      PREQUAL_HOOKS_DASHBOARD_READONLY_TOKEN: READ_ONLY,
    });
    const answer = await fetch(`${serve.baseUrl}/changes`, { headers: as(READ_ONLY) });
    expect(answer.status).toBe(404);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('RESOURCE_NOT_FOUND');
    expect(await serve.stop('SIGTERM')).toBe(0);
  });
});

describe('serve --changes-retention', () => {
  const tmp = tempDir();
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });

  it('drops the changes older than the retention at start, and a cursor below them gets 410', async () => {
    const db = join(tmp.dir, 'retention.db');
    const args = ['--port', '0', '--host', '127.0.0.1', '--db', db, '--secret', SECRET, '--feed-token', FEED];
    const first = await startServe(args);
    const request = signedRequest(JSON.stringify(sampleEvent('campaign.created', { data: { campaign_id: 'cmp_old' } })), {
      secret: SECRET,
    });
    expect((await fetch(first.webhookUrl, { method: 'POST', headers: request.headers, body: request.body })).status).toBe(200);
    const recorded = await waitFor(
      async () => ((await (await fetch(`${first.baseUrl}/changes`, { headers: as(FEED) })).json()) as { changes: WireChange[] }).changes[0],
      5000,
      'the change recorded',
    );
    expect(await first.stop('SIGTERM')).toBe(0);
    // The change must be older than the retention of the next start: its age passing 1 s is the event awaited.
    await waitFor(() => Date.now() - Date.parse(recorded.at) > 1000, 5000, 'the change to be more than 1 s old');

    const second = await startServe([...args, '--changes-retention', '1s']);
    await waitFor(
      () => second.logLines().find((line) => String(line.msg).startsWith('changes retention: 1 change')),
      5000,
      'the prune at start',
    );
    const answer = await fetch(`${second.baseUrl}/changes?after=0`, { headers: as(FEED) });
    expect(answer.status).toBe(410);
    expect(((await answer.json()) as { oldest: number }).oldest).toBe(2);
    expect(await second.stop('SIGTERM')).toBe(0);

    const wrong = await runCliProcess(['serve', ...args, '--changes-retention', '30 days']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--changes-retention must be a whole number and a unit, s, m, h, d or w (such as 30d), got "30 days"');
    const short = await runCliProcess(['serve', ...args.slice(0, -1), 'too-short']);
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('--feed-token must be at least 16 characters');
  });
});
