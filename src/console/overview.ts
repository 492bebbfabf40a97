// The overview: what the inbox holds, how fast events arrive, how far behind the projection is,
// whether storage takes writes, and the account's credits.
import type { Router } from 'express';
import type { CreditsRow } from '../tables/rows.js';
import { html, layout, when, type PageContext } from './html.js';
import type { ConsoleData } from './source.js';

/**
 * Verified requests by secret: by fingerprint for the full console; numbered for the read-only one,
 * since a fingerprint is a plain SHA-256 prefix against which a viewer could test guesses of a weak secret offline.
 */
type SecretUse = { fingerprint: string; requests: number } | { secret: number; requests: number };

function secretsShown(secrets: ReadonlyArray<{ fingerprint: string; requests: number }>, full: boolean): SecretUse[] {
  return full ? [...secrets] : secrets.map(({ requests }, i) => ({ secret: i + 1, requests }));
}

async function overviewData(data: ConsoleData, full: boolean) {
  const inbox = await data.inbox();
  const [counts, probe, oldestPending, credits, secrets] = await Promise.all([
    data.source.counts(),
    data.source.probe(),
    inbox.oldestPending(),
    data.source.query.getCredits(),
    data.source.secretUse?.() ?? [],
  ]);
  const lagSeconds = oldestPending === null ? 0 : Math.max(0, (Date.now() - Date.parse(oldestPending)) / 1000);
  return {
    counts,
    storage: probe,
    projection: { oldest_pending: oldestPending, lag_seconds: lagSeconds },
    credits,
    secrets: secretsShown(secrets, full),
  };
}

/** Whether the account can spend now, as the credits row tells it: depleted only at or below 0. */
function creditsDepleted(credits: CreditsRow): boolean {
  return credits.credits_remaining !== null && credits.credits_remaining <= 0;
}

// `last_campaign_id` stays in the row after credits come back (a later credits.low), so the
// campaign is named as the depletion's only while the balance says the account is still out.
function creditsNote(context: PageContext, credits: CreditsRow) {
  if (credits.credits_remaining === null && credits.low_threshold === null && credits.last_campaign_id === null)
    return 'No credits event yet.';
  const threshold = credits.low_threshold === null ? '' : html`Low threshold ${credits.low_threshold}. `;
  if (credits.last_campaign_id === null) return threshold;
  const campaign = html`<a href="${context.base}/campaigns/${encodeURIComponent(credits.last_campaign_id)}">${credits.last_campaign_id}</a>`;
  return creditsDepleted(credits)
    ? html`${threshold}Depleted on campaign ${campaign}.`
    : html`${threshold}Last ran out on campaign ${campaign}; credits have come back since.`;
}

export function overviewRoutes(router: Router, data: ConsoleData): void {
  router.get('/api/overview', async (req, res) => {
    res.json(await overviewData(data, data.context(req).csrf !== undefined));
  });
  router.get('/api/events-per-minute', async (_req, res) => {
    res.json({ minutes: await (await data.inbox()).eventsPerMinute(60) });
  });
  router.get('/', async (req, res) => {
    const context = data.context(req);
    const { counts, storage, projection, credits, secrets } = await overviewData(data, context.csrf !== undefined);
    const total = counts.pending + counts.projected + counts.unknown + counts.dead;
    const link = (state: string) => `${context.base}/events?state=${state}`;
    const body = html`
<section class="cards">
  <div class="card"><h2>Inbox</h2>
    <table class="counts" id="inbox-counts">
      <tr><th>pending</th><td data-state="pending"><a href="${link('pending')}">${counts.pending}</a></td></tr>
      <tr><th>projected</th><td data-state="projected"><a href="${link('projected')}">${counts.projected}</a></td></tr>
      <tr><th>unknown</th><td data-state="unknown"><a href="${link('unknown')}">${counts.unknown}</a></td></tr>
      <tr><th>dead</th><td data-state="dead"><a href="${link('dead')}">${counts.dead}</a></td></tr>
      <tr class="total"><th>total</th><td data-state="total">${total}</td></tr>
    </table>
  </div>
  <div class="card"><h2>Projection lag</h2>
    <p class="figure" id="projection-lag">${projection.oldest_pending === null ? 'up to date' : `${projection.lag_seconds.toFixed(1)} s`}</p>
    <p class="note">${projection.oldest_pending === null ? 'No event waits to be projected.' : html`Oldest pending event received ${when(projection.oldest_pending)}.`}</p>
  </div>
  <div class="card"><h2>Handler failures</h2>
    <p class="figure" id="handler-failures"><a href="${context.base}/dead-letters#handler-failures">${counts.handler_failures}</a></p>
    <p class="note">Handlers that kept failing; retry them from Dead letters.</p>
  </div>
  <div class="card"><h2>Storage</h2>
    <p class="figure ${storage.ok ? 'ok' : 'bad'}" id="storage">${storage.ok ? 'ready' : 'not ready'}</p>
    <p class="note">${storage.ok ? 'Takes writes now.' : storage.reason}</p>
  </div>
  <div class="card"><h2>Credits</h2>
    <p class="figure${creditsDepleted(credits) ? ' bad' : ''}" id="credits">${credits.credits_remaining ?? '—'}</p>
    <p class="note">${creditsNote(context, credits)}</p>
  </div>
  <div class="card"><h2>Webhook secrets</h2>
    <table class="counts" id="secret-use">
      ${secrets.map((s) =>
        'fingerprint' in s
          ? html`<tr><th><code>${s.fingerprint}</code></th><td data-secret="${s.fingerprint}">${s.requests}</td></tr>`
          : html`<tr><th>secret ${s.secret}</th><td data-secret="${s.secret}">${s.requests}</td></tr>`,
      )}
    </table>
    <p class="note">${secrets.length === 0 ? 'No signed request since this process started.' : 'Verified requests by secret fingerprint since start: during a rotation, the old secret is unused once its count stops growing.'}${secrets.some((s) => !('fingerprint' in s)) ? ' Fingerprints are shown to the full console only.' : ''}</p>
  </div>
</section>
<section><h2>Events per minute, last hour</h2>
  <div id="events-chart" class="chart" data-src="${context.base}/api/events-per-minute"></div>
</section>`;
    res.type('html').send(layout(context, 'Overview', '/', body, { chart: true }));
  });
}
