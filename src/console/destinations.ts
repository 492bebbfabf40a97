// An account's destinations (docs/destinations.md) as operators see them: state, lag, the last
// error and the dead deliveries, each with its Retry and a Retry all. Read through the store's
// destinations' SQL (src/destinations/sql.ts); URLs are shown with their user info masked and without their query, and
// payloads never; errors are the delivery's own words (a status, a socket code), never a
// receiver's answer body, so they are shown as they are. The actions are POSTs: behind the CSRF check, refused read-only by the router.
import type { Request, Response, Router } from 'express';
import { destinationsOf, type DestinationRecord, type QueuedSend } from '../destinations/sql.js';
import { maskedUrl } from '../destinations/masked-url.js';
import { describeAuth, storedAuth } from '../destinations/authentication.js';
import { destinationType } from '../destinations/registry.js';
import { destinationLag, nextAttemptAt } from '../destinations/standing.js';
import { actionForm, html, layout, when, type SafeHtml } from './html.js';
import { idParam, type ConsoleData } from './source.js';

/** Dead deliveries shown per destination; Retry all reaches every one. */
const DEAD_SHOWN = 100;

interface Shown {
  record: DestinationRecord;
  behind: number;
  oldestSeconds: number;
  dead: QueuedSend[];
  deadCount: number;
  /** When its next attempt is due (ISO 8601), or null. */
  nextAttemptAt: string | null;
  lastError: { error: string; status: number | null; at: string | null } | undefined;
}

async function shownDestinations(data: ConsoleData): Promise<Shown[]> {
  const store = await data.source.store();
  const destinations = destinationsOf(store);
  const records = await destinations.list(data.source.account);
  const now = Date.now();
  return await Promise.all(
    records.map(async (record) => {
      const [lag, dead, queued, backlog] = await Promise.all([
        destinationLag({ destinations, forAccount: (account) => store.forAccount(account) }, record, now),
        destinations.deliveries(record, 'dead', DEAD_SHOWN),
        destinations.deliveries(record, 'queued', DEAD_SHOWN),
        destinations.backlog(record),
      ]);
      const failed = [...dead, ...queued]
        .filter((d) => d.last_error !== null)
        .sort((a, b) => (b.failed_at ?? '').localeCompare(a.failed_at ?? ''))[0];
      const lastError = failed && { error: failed.last_error!, status: failed.last_status, at: failed.failed_at };
      const next = nextAttemptAt(record, backlog.due);
      return { record, behind: lag.behind, oldestSeconds: lag.oldestSeconds, dead, deadCount: lag.dead, nextAttemptAt: next, lastError };
    }),
  );
}

export function destinationRoutes(router: Router, data: ConsoleData): void {
  router.get('/destinations', (req, res) => destinationsPage(data, req, res));
  const back = (req: Request, retried: number) => `${req.baseUrl}/destinations?retried=${retried}`;
  router.post('/destinations/:destination/retry', async (req: Request<{ destination: string }>, res) => {
    const form = (req.body ?? {}) as Record<string, unknown>;
    const seq = idParam(form.seq);
    const key = { account: data.source.account, destination: req.params.destination };
    const store = await data.source.store();
    // Without a seq, every dead delivery of the destination (Retry all).
    const retried = form.seq !== undefined && seq === undefined ? 0 : await destinationsOf(store).retryDead(key, seq, Date.now());
    res.redirect(303, back(req, retried));
  });
}

function seconds(value: number): string {
  return value < 10 ? value.toFixed(1) : String(Math.round(value));
}

function destinationSection(data: ConsoleData, req: Request, shown: Shown): SafeHtml {
  const context = data.context(req);
  const { record } = shown;
  const action = `${context.base}/destinations/${encodeURIComponent(record.destination)}/retry`;
  return html`<section class="destination" data-destination="${record.destination}">
<h2>${record.destination}</h2>
<dl class="facts">
<dt>URL</dt><dd><code class="url">${maskedUrl(record.url)}</code></dd>
<dt>Type</dt><dd class="type">${destinationType(record.url)}${record.kind === 'operational' ? ' (operational)' : ''}</dd>
<dt>Authentication</dt><dd class="auth">${describeAuth(storedAuth(record.url, record.auth))}</dd>
<dt>State</dt><dd><span class="state ${record.state}">${record.state}</span>${record.state_reason === null ? '' : html` <span class="note">${record.state_reason}</span>`}</dd>
<dt>Lag</dt><dd><span class="lag-changes">${shown.behind}</span> ${shown.behind === 1 ? 'change' : 'changes'} behind, the oldest <span class="lag-seconds">${seconds(shown.oldestSeconds)}</span> s old</dd>
<dt>Last error</dt><dd class="error">${shown.lastError === undefined ? '—' : html`${shown.lastError.status === null ? '' : `${shown.lastError.status} `}${shown.lastError.error} (${when(shown.lastError.at)})`}</dd>
<dt>Dead</dt><dd class="dead-count">${shown.deadCount}</dd>
<dt>Next attempt</dt><dd class="next-attempt">${shown.nextAttemptAt === null ? '—' : when(shown.nextAttemptAt)}</dd>
</dl>
${shown.deadCount === 0 ? '' : actionForm(context, action, `Retry all ${shown.deadCount}`, {}, 'retry-all')}
${
  shown.dead.length === 0
    ? html`<p class="empty">No dead delivery.</p>`
    : html`<table class="dead-deliveries"><thead><tr><th>seq</th><th>entity</th><th>attempts</th><th>last status</th><th>last error</th><th>failed</th><th></th></tr></thead><tbody>
${shown.dead.map(
  (
    d,
  ) => html`<tr data-seq="${d.seq}"><td>${d.seq}</td><td>${d.entity} <code>${d.entity_id}</code></td><td>${d.attempts}</td><td>${d.last_status ?? '—'}</td>
<td class="error">${d.last_error ?? '—'}</td><td>${when(d.failed_at)}</td>
<td>${actionForm(context, action, 'Retry', { seq: d.seq }, 'retry')}</td></tr>`,
)}</tbody></table>`
}
</section>`;
}

/** Every destination of the account, with its lag and its dead deliveries. */
async function destinationsPage(data: ConsoleData, req: Request, res: Response): Promise<void> {
  const context = data.context(req);
  const shown = await shownDestinations(data);
  const retried = idParam(req.query.retried);
  const body = html`
${retried === undefined ? '' : html`<p class="notice" id="notice">${retried} dead ${retried === 1 ? 'delivery' : 'deliveries'} queued again.</p>`}
<p>Where this account's changes are POSTed (<code>prequal-hooks destinations</code> adds and removes them). A retried delivery is due at once, its attempts from 0.</p>
${shown.length === 0 ? html`<p class="empty">No destination.</p>` : shown.map((s) => destinationSection(data, req, s))}`;
  res.type('html').send(layout(context, 'Destinations', '/destinations', body));
}
