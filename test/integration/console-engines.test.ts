// The console's pages and actions on each engine, over HTTP (the browser tests run on SQLite).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from '../../src/receiver/create-receiver.js';
import { sampleEvent } from '../../src/testing/index.js';
import { crawlConsole, withReveal } from '../support/console-crawl.js';
import { ENGINES, type EngineUnderTest } from '../support/engines.js';
import {
  CAMPAIGN,
  INVALID_EVENT,
  LARGE_NOT_JSON,
  largeEvent,
  leaked,
  NOT_JSON,
  THESSALY,
  UNKNOWN_KIND_EVENT,
  ZELPHINE,
  ZELPHINE_EVENTS,
} from '../support/personal-bodies.js';
import { listen } from '../support/servers.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures/');
const TOKEN = 'console-engines-token-93f1';
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const RK4 = 'cmp_Rk4vN8qWz2';
const ELOISE = 'f332892f-d38e-44df-8ebf-7c9f49065885';

/**
 * A receiver on a fresh database of the engine with its console at /ops (and a read-only one at
 * /ro), for one describe block: `receiver` and `server` are set before its tests run.
 */
function consoleOn(engine: EngineUnderTest): { receiver: Receiver; server: { url: string; close: () => Promise<void> } } {
  const running = {} as { receiver: Receiver; server: { url: string; close: () => Promise<void> } };
  let cleanup = () => undefined as void;
  beforeAll(async () => {
    const fresh = await engine.fresh();
    cleanup = fresh.cleanup;
    running.receiver = createReceiver({ database: fresh.database, allowUnsigned: true });
    await running.receiver.ready();
    const app = express();
    app.use('/ops', running.receiver.dashboard({ token: TOKEN }));
    app.use('/ro', running.receiver.dashboard({ token: TOKEN, readOnly: true }));
    running.server = await listen(app as never);
  });
  afterAll(async () => {
    await running.server.close();
    await running.receiver.close();
    cleanup();
  });
  return running;
}

describe.each(ENGINES)('the console on $name', (engine) => {
  const running = consoleOn(engine);
  beforeAll(async () => {
    await running.receiver.replay([
      `${FIXTURES}scenarios/campaign-lifecycle.ndjson`,
      JSON.parse(readFileSync(`${FIXTURES}invalid/unknown-kind.json`, 'utf8')),
    ]);
    await running.receiver.drain();
  });

  const get = async (path: string) => {
    const answer = await fetch(`${running.server.url}/ops${path}`, { headers: AUTH });
    return { status: answer.status, text: await answer.text() };
  };

  it('renders every page from the query API', async () => {
    const overview = await get('/');
    expect(overview.status).toBe(200);
    expect(overview.text).toMatch(/data-state="projected"><a [^>]*>46</);
    expect(overview.text).toMatch(/data-state="unknown"><a [^>]*>1</);
    const data = JSON.parse((await get('/api/overview')).text) as {
      counts: Record<string, number>;
      storage: { ok: boolean };
      credits: { credits_remaining: number };
    };
    expect(data.counts).toEqual(await running.receiver.counts());
    expect(data.storage.ok).toBe(true);
    expect(data.credits.credits_remaining).toBe(0);
    const minutes = JSON.parse((await get('/api/events-per-minute')).text) as { minutes: Array<{ count: number }> };
    expect(minutes.minutes.reduce((sum, m) => sum + m.count, 0)).toBe(47);

    const events = await get(`/events?campaign=${RK4}&kind=candidate.added`);
    expect(events.status).toBe(200);
    const added = readFileSync(`${FIXTURES}scenarios/campaign-lifecycle.ndjson`, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"candidate.added"') && l.includes(RK4));
    expect(events.text.match(/<tr data-inbox-id=/g)).toHaveLength(added.length);
    expect((await get('/events?from=not-a-date')).status).toBe(400);

    const campaign = await get(`/campaigns/${RK4}?sort=score_desc&per_page=3`);
    expect(campaign.text).toMatch(/id="stat-total">8</);
    expect(campaign.text).toMatch(/page 1 of 3 \(8 candidates\)/);
    const candidate = await get(`/candidates/${ELOISE}`);
    expect(candidate.text).toContain('É*** M***');
    expect(candidate.text).not.toContain('Marchand');
    expect((await get(`/candidates/${ELOISE}?reveal=1`)).text).toContain('Éloïse');
    expect((await get('/candidates/nobody')).status).toBe(404);
  });

  it("reprocesses all that match after the preview, with the form's CSRF token", async () => {
    const preview = await get('/dead-letters/reprocess?state=unknown');
    expect(preview.text).toMatch(/id="preview-count">1</);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(preview.text)![1]!;
    const upTo = /name="up_to" value="(\d+)"/.exec(preview.text)![1]!;
    const done = await fetch(`${running.server.url}/ops/dead-letters/reprocess`, {
      method: 'POST',
      headers: { ...AUTH, 'Content-Type': 'application/x-www-form-urlencoded', Origin: running.server.url },
      body: new URLSearchParams({ _csrf: csrf, state: 'unknown', up_to: upTo }).toString(),
      redirect: 'manual',
    });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/ops/dead-letters?requeued=1&skipped=0');
    await running.receiver.drain();
    // Still unknown to this version: set aside again, and counted once.
    expect((await running.receiver.counts()).unknown).toBe(1);
  });
});

describe.each(ENGINES)('the Credits card on $name', (engine) => {
  const running = consoleOn(engine);

  async function card(): Promise<{ figure: string; note: string }> {
    const text = await (await fetch(`${running.server.url}/ops/`, { headers: AUTH })).text();
    const [, figure, note] =
      /<h2>Credits<\/h2>\s*<p class="figure[^"]*" id="credits">([^<]*)<\/p>\s*<p class="note">([\s\S]*?)<\/p>/.exec(text) ?? [];
    return { figure: figure!, note: note!.replace(/<[^>]+>/g, '') };
  }
  const send = async (...events: object[]) => {
    await running.receiver.replay(events);
    await running.receiver.drain();
  };

  it('says the credits ran out only while they have, and on which campaign', async () => {
    expect(await card()).toEqual({ figure: '—', note: 'No credits event yet.' });

    // A depletion alone is a credits event: the card says so, and where it happened.
    await send(
      sampleEvent('credits.depleted', {
        timestamp: '2026-11-20T10:00:00.000Z',
        data: { credits_remaining: 0, last_campaign_id: 'cmp_first' },
      }),
    );
    let shown = await card();
    expect(shown.figure).toBe('0');
    expect(shown.note).toBe('Depleted on campaign cmp_first.');

    // Credits came back (a later credits.low at 8.5): the account is not depleted any more.
    await send(sampleEvent('credits.low', { timestamp: '2026-11-20T11:00:00.000Z', data: { credits_remaining: 8.5, threshold: 10 } }));
    shown = await card();
    expect(shown.figure).toBe('8.5');
    expect(shown.note).not.toMatch(/^Depleted|\bDepleted on/);
    expect(shown.note).toBe('Low threshold 10. Last ran out on campaign cmp_first; credits have come back since.');

    // Out again, on another campaign.
    await send(
      sampleEvent('credits.depleted', {
        timestamp: '2026-11-20T12:00:00.000Z',
        data: { credits_remaining: -1.5, last_campaign_id: 'cmp_second' },
      }),
    );
    shown = await card();
    expect(shown.figure).toBe('-1.5');
    expect(shown.note).toBe('Low threshold 10. Depleted on campaign cmp_second.');
  });

  it('counts in words that agree with the number: 1 candidate, 2 candidates', async () => {
    await send(
      sampleEvent('candidate.added', { data: { campaign_id: 'cmp_counted', candidate_id: 'cand-counted-1' } }),
      sampleEvent('candidate.added', { data: { campaign_id: 'cmp_counted', candidate_id: 'cand-counted-2' } }),
    );
    const page = async (path: string) =>
      (await (await fetch(`${running.server.url}/ops${path}`, { headers: AUTH })).text()).replace(/<[^>]+>/g, '').replace(/\s+/g, ' ');
    expect(await page('/campaigns/cmp_counted')).toContain('page 1 of 1 (2 candidates)');
    expect(await page('/campaigns/cmp_counted?per_page=1')).toContain('page 1 of 2 (2 candidates)');
    expect(await page('/campaigns/cmp_counted?status=pending&min_score=1')).toContain('page 1 of 1 (0 candidates)');
    await send(sampleEvent('candidate.added', { data: { campaign_id: 'cmp_single', candidate_id: 'cand-single' } }));
    expect(await page('/campaigns/cmp_single')).toContain('page 1 of 1 (1 candidate)');
  });
});

describe.each(ENGINES)('the campaigns, a page at a time, on $name', (engine) => {
  const running = consoleOn(engine);
  // Newest first, a tie of dates by id, then the campaigns known only through a candidate by id.
  const ORDER = ['cmp_e', 'cmp_b', 'cmp_c', 'cmp_a', 'cmp_d', 'cmp_x', 'cmp_y', 'cmp_z'];
  beforeAll(async () => {
    const created = (id: string, hour: number) =>
      sampleEvent('campaign.created', { timestamp: `2026-11-20T${String(hour).padStart(2, '0')}:00:00.000Z`, data: { campaign_id: id } });
    await running.receiver.replay([
      created('cmp_a', 10),
      created('cmp_c', 11),
      created('cmp_b', 11),
      created('cmp_d', 9),
      created('cmp_e', 12),
      ...['cmp_z', 'cmp_x', 'cmp_y'].map((id) =>
        sampleEvent('candidate.added', { data: { campaign_id: id, candidate_id: `cand-of-${id}` } }),
      ),
    ]);
    await running.receiver.drain();
  });

  it('links each page to the next until the last, every campaign once and in order', async () => {
    const pages: string[][] = [];
    for (let path: string | undefined = '/ops/campaigns?limit=2'; path !== undefined;) {
      const answer = await fetch(`${running.server.url}${path.replaceAll('&amp;', '&')}`, { headers: AUTH });
      expect(answer.status).toBe(200);
      const text = await answer.text();
      pages.push([...text.matchAll(/<tr data-campaign-id="([^"]+)"/g)].map((m) => m[1]!));
      path = /<a rel="next" href="([^"]+)">older/.exec(text)?.[1];
      if (pages.length > 1) expect(text).toContain('« newest');
    }
    expect(pages).toEqual([ORDER.slice(0, 2), ORDER.slice(2, 4), ORDER.slice(4, 6), ORDER.slice(6, 8)]);
    expect((await running.receiver.query.listCampaigns()).map((c) => c.campaign_id)).toEqual(ORDER);
    expect(await running.receiver.query.listCampaignPage({ after: 'cmp_unknown' })).toEqual({ campaigns: [], next: null });
    const first = await fetch(`${running.server.url}/ops/campaigns`, { headers: AUTH });
    expect((await first.text()).match(/<tr data-campaign-id=/g)).toHaveLength(ORDER.length);
    expect((await fetch(`${running.server.url}/ops/campaigns?limit=501`, { headers: AUTH })).status).toBe(400);
  });
});

describe.each(ENGINES)('export and erasure in the console on $name', (engine) => {
  const ANA = 'cand-console-erase-1';
  const running = consoleOn(engine);
  beforeAll(async () => {
    await running.receiver.replay([
      sampleEvent('candidate.added', {
        timestamp: '2026-11-20T10:00:00.000Z',
        data: {
          campaign_id: 'cmp_erase',
          candidate_id: ANA,
          first_name: 'Anaïs',
          last_name: 'Quennehen',
          email: 'anais.quennehen@example.org',
          phone: '+33611223344',
        },
      }),
      sampleEvent('candidate.interview.started', {
        timestamp: '2026-11-20T11:00:00.000Z',
        data: { campaign_id: 'cmp_erase', candidate_id: ANA },
      }),
    ]);
    await running.receiver.drain();
  });
  const get = async (path: string) => {
    const answer = await fetch(`${running.server.url}${path}`, { headers: AUTH });
    return { status: answer.status, headers: answer.headers, text: await answer.text() };
  };
  const post = (path: string, form: Record<string, string>) =>
    fetch(`${running.server.url}${path}`, {
      method: 'POST',
      headers: { ...AUTH, 'Content-Type': 'application/x-www-form-urlencoded', Origin: running.server.url },
      body: new URLSearchParams(form).toString(),
      redirect: 'manual',
    });

  it('offers neither export nor erasure on a read-only console, and refuses both', async () => {
    const page = await get(`/ro/candidates/${ANA}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('id="export"');
    expect(page.text).not.toContain('id="erase"');
    expect((await get(`/ro/candidates/${ANA}/export`)).status).toBe(403);
    expect((await get(`/ro/candidates/${ANA}/erase`)).status).toBe(403);
    expect((await post(`/ro/candidates/${ANA}/erase`, { reason: 'x', confirm: ANA })).status).toBe(403);
    expect((await get('/ro/erasures')).status).toBe(200);
  });

  it('exports everything held about the candidate as a JSON download', async () => {
    expect((await get(`/ops/candidates/${ANA}`)).text).toContain('id="export"');
    const exported = await get(`/ops/candidates/${ANA}/export`);
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toMatch(/^application\/json/);
    expect(exported.headers.get('content-disposition')).toBe(`attachment; filename="candidate-${ANA}.json"`);
    expect(exported.headers.get('cache-control')).toBe('no-store');
    const document = JSON.parse(exported.text) as { candidate: { email: string }; events: unknown[] };
    expect(document.candidate.email).toBe('anais.quennehen@example.org');
    expect(document.events).toHaveLength(2);
  });

  it('erases only with the CSRF token, a reason and the id typed again, and lists the erasure without personal data', async () => {
    const form = await get(`/ops/candidates/${ANA}/erase`);
    expect(form.status).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form.text)![1]!;
    const path = `/ops/candidates/${ANA}/erase`;

    expect((await post(path, { reason: 'asked by mail', confirm: ANA })).status).toBe(403); // no CSRF token
    const mistyped = await post(path, { _csrf: csrf, reason: 'asked by mail', confirm: `${ANA}x` });
    expect(mistyped.status).toBe(400);
    expect(await mistyped.text()).toContain('does not match: nothing was erased');
    const reasonless = await post(path, { _csrf: csrf, reason: '  ', confirm: ANA });
    expect(reasonless.status).toBe(400);
    expect((await get(`/ops/candidates/${ANA}`)).status).toBe(200); // still there
    const unknown = await post('/ops/candidates/nobody-here/erase', { _csrf: csrf, reason: 'asked', confirm: 'nobody-here' });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain('No candidate with this id');

    const done = await post(path, { _csrf: csrf, reason: 'asked by mail, ticket 77', confirm: ANA });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(`/ops/erasures?erased=${ANA}&redacted=2`);
    expect((await get(`/ops/candidates/${ANA}`)).status).toBe(404);

    const erasures = await get(`/ops/erasures?erased=${ANA}&redacted=2`);
    expect(erasures.text).toContain('2 stored events redacted');
    expect(erasures.text).toMatch(
      new RegExp(
        `<code>${ANA}</code></td><td>\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\dZ</td><td>asked by mail, ticket 77</td><td class="num">2</td>`,
      ),
    );
    for (const page of [erasures.text, (await get('/ops/events?campaign=cmp_erase')).text]) {
      expect(page).not.toMatch(/Anaïs|Quennehen|anais\.quennehen|33611223344/);
    }
    const exported = JSON.parse((await get(`/ops/candidates/${ANA}/export`)).text) as {
      candidate: unknown;
      erasures: Array<{ reason: string }>;
    };
    expect(exported.candidate).toBeNull();
    expect(exported.erasures.map((e) => e.reason)).toEqual(['asked by mail, ticket 77']);
    expect(await running.receiver.metrics().metrics()).toMatch(/prequal_hooks_erasures_total\{account="default",reason="request"\} 1/);
  });
});

describe.each(ENGINES)('personal data in the console on $name: masked by what is known to be safe, everywhere', (engine) => {
  let receiver: Receiver;
  let server: { url: string; close: () => Promise<void> };
  let cleanup = () => undefined as void;
  beforeAll(async () => {
    const fresh = await engine.fresh();
    cleanup = fresh.cleanup;
    receiver = createReceiver({ database: fresh.database, allowUnsigned: true, dispatch: { handlerAttempts: 1, handlerRetryDelayMs: 1 } });
    // A handler's error message is the operator's code's words: here it names the candidate.
    receiver.on(
      'candidate.added',
      async () => {
        throw new Error('CRM refused Zelphine Quarkwood (06 55 41 27 98)');
      },
      { name: 'crm-sync' },
    );
    await receiver.ready();
    const app = express();
    app.post('/webhooks', receiver.middleware());
    app.use('/ops', receiver.dashboard({ token: TOKEN }));
    app.use('/ro', receiver.dashboard({ token: TOKEN, readOnly: true }));
    server = await listen(app as never);
    for (const body of [...ZELPHINE_EVENTS, INVALID_EVENT, UNKNOWN_KIND_EVENT, largeEvent()].map((e) => JSON.stringify(e))) {
      expect(
        (await fetch(`${server.url}/webhooks`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body })).status,
      ).toBe(200);
    }
    for (const body of [NOT_JSON, LARGE_NOT_JSON]) {
      expect(
        (await fetch(`${server.url}/webhooks`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body })).status,
      ).toBe(400);
    }
    await receiver.drain();
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
    cleanup();
  });

  const leaksIn = (answers: Array<{ path: string; status: number; text: string }>) =>
    answers.flatMap((a) => [
      ...leaked(a.text).map((secret) => `${a.path}: ${secret}`),
      ...(a.status >= 500 ? [`${a.path}: ${a.status}`] : []),
    ]);
  const candidatePaths = [
    `/candidates/${ZELPHINE}`,
    `/candidates/${THESSALY}`,
    `/candidates/${ZELPHINE}/export`,
    '/dead-letters?state=dead',
    '/dead-letters?state=unknown',
  ];

  it('shows the read-only token none of it, on any page or data route, even when it asks to reveal', async () => {
    const authorization = `Bearer ${TOKEN}`;
    const crawled = await crawlConsole({ base: `${server.url}/ro`, authorization, extra: candidatePaths });
    const events = crawled.filter((a) => /^\/events\/\d+$/.test(a.path));
    expect(events.length).toBe(7); // every stored body's page was reached
    const revealed = await crawlConsole({
      base: `${server.url}/ro`,
      authorization,
      extra: withReveal(crawled.map((a) => a.path)),
      limit: 1000,
    });
    expect(leaksIn([...crawled, ...revealed])).toEqual([]);
    expect(revealed.some((a) => a.path.includes('reveal=1') && a.status === 200)).toBe(true);
  });

  it('shows the full token none of it until it reveals, and all of it once it does', async () => {
    const authorization = `Bearer ${TOKEN}`;
    const crawled = await crawlConsole({
      base: `${server.url}/ops`,
      authorization,
      extra: candidatePaths.filter((p) => !p.endsWith('/export')),
      skip: (path) => path.includes('reveal=1') || path.endsWith('/export'),
    });
    expect(crawled.filter((a) => /^\/events\/\d+$/.test(a.path)).length).toBe(7);
    expect(leaksIn(crawled)).toEqual([]);

    const get = async (path: string) => (await fetch(`${server.url}/ops${path}`, { headers: { Authorization: authorization } })).text();
    const candidate = await get(`/candidates/${ZELPHINE}?reveal=1`);
    expect(missing(candidate, ['Zelphine Quarkwood', 'joignable au 06 55 41 27 98', 'Mme Quarkwood est précise.', '13 €/h'])).toEqual([]);
    expect(missing(await get('/dead-letters?reveal=1'), ['CRM refused Zelphine Quarkwood'])).toEqual([]);
    const ids = (
      JSON.parse(await get('/api/events?limit=500')) as { events: Array<{ inbox_id: number; kind: string | null; verdict: string }> }
    ).events;
    const large = ids.find(
      (e) =>
        e.kind === 'candidate.interview.completed.extended' &&
        e.inbox_id === Math.max(...ids.filter((i) => i.kind === e.kind).map((i) => i.inbox_id)),
    )!;
    expect(missing(await get(`/events/${large.inbox_id}?reveal=1`), ['Thessaly Vornhagen'])).toEqual([]);
    const unknown = ids.find((e) => e.kind === UNKNOWN_KIND_EVENT.event)!;
    expect(missing(await get(`/events/${unknown.inbox_id}?reveal=1`), ['Oriabel Stanwick'])).toEqual([]);
    expect(
      JSON.parse(await get(`/api/events?limit=500&reveal=1`)).events.some((e: { reasons: Array<{ message: string }> }) =>
        e.reasons.some((r) => r.message.includes('Perrine')),
      ),
    ).toBe(true);
  });

  /** Whether a page shows each of these (a short failure, not a page-long diff). */
  const missing = (text: string, shown: string[]) => shown.filter((s) => !text.includes(s));

  it("still shows what holds no personal data: ids, kinds, statuses, scores, dates, the campaign's questions", async () => {
    const get = async (path: string) => (await fetch(`${server.url}/ro${path}`, { headers: AUTH })).text();
    const candidate = await get(`/candidates/${ZELPHINE}`);
    expect(
      missing(candidate, [
        'Z*** Q***',
        'z***@exemple.fr',
        '+33 6** ** ** 98',
        '7.5',
        '2026-12-01',
        'Pouvez-vous vous présenter ?',
        CAMPAIGN,
      ]),
    ).toEqual([]);
    const ids = (
      JSON.parse(await get('/api/events?limit=500')) as { events: Array<{ inbox_id: number; kind: string | null; verdict: string }> }
    ).events;
    const extended = ids
      .filter((e) => e.kind === 'candidate.interview.completed.extended')
      .map((e) => e.inbox_id)
      .sort((a, b) => a - b);
    const small = await get(`/events/${extended[0]}`);
    expect(
      missing(small, [
        `&quot;candidate_id&quot;: &quot;${ZELPHINE}&quot;`,
        '&quot;interview_score&quot;: 7.5',
        '&quot;availability_start&quot;: &quot;2026-12-01&quot;',
        '&quot;timestamp&quot;: &quot;2026-11-20T10:02:00.000Z&quot;',
      ]),
    ).toEqual([]);
    const large = await get(`/events/${extended[1]}`);
    // Masked, the whole body fits: its last question is shown.
    expect(
      missing(large, [`&quot;candidate_id&quot;: &quot;${THESSALY}&quot;`, '&quot;question&quot;: &quot;Question 800 ?&quot;']),
    ).toEqual([]);
    const unknown = await get(`/events/${ids.find((e) => e.kind === UNKNOWN_KIND_EVENT.event)!.inbox_id}`);
    expect(missing(unknown, ['&quot;event&quot;: &quot;candidate.callback.requested&quot;'])).toEqual([]);
    expect(unknown.includes('cand-masking-oriabel')).toBe(false); // an unknown kind's data is all masked
    const notJson = ids.filter((e) => e.verdict === 'invalid_json');
    expect(notJson).toHaveLength(2);
    for (const e of notJson) expect(missing(await get(`/events/${e.inbox_id}`), ['not JSON'])).toEqual([]);
  });
});
