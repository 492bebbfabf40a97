// Dead letters (events of unknown kinds, or whose data did not validate) and handler failures:
// act on one, or on all that match a filter after a preview of how many. A bulk action carries
// the newest id its preview counted, so what arrived since is left for the next look.
import type { Request, Response, Router } from 'express';
import type { InboxState } from '../store/inbox-state.js';
import { actionForm, href, html, layout, revealNote, when } from './html.js';
import { shownError, shownSummary } from './mask.js';
import { agreed } from '../words.js';
import { filterForm } from './events.js';
import { idParam, type ConsoleData } from './source.js';

const SET_ASIDE: InboxState[] = ['unknown', 'dead'];
/** The most one bulk action requeues; the preview says when a filter matches more. */
const BULK_LIMIT = 10_000;

function setAsideFilter(source: Record<string, unknown>) {
  const pick = (name: string) => (typeof source[name] === 'string' && source[name] !== '' ? source[name] : undefined);
  const state = pick('state');
  return {
    kind: pick('kind'),
    state: state === 'unknown' || state === 'dead' ? (state as InboxState) : undefined,
    handler: pick('handler'),
  };
}

function queryOf(req: Request): Record<string, unknown> {
  return Object.fromEntries(Object.entries(req.query).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
}

export function deadLetterRoutes(router: Router, data: ConsoleData): void {
  router.get('/dead-letters', (req, res) => deadLettersPage(data, req, res));

  // Previews: how many a bulk action would touch, and the form that does it.
  router.get('/dead-letters/reprocess', async (req, res) => {
    const context = data.context(req);
    const filter = setAsideFilter(queryOf(req));
    const { count, upTo } = await (
      await data.inbox()
    ).countEvents({ state: filter.state ?? SET_ASIDE, verdict: 'accepted', ...(filter.kind && { kind: filter.kind }) });
    const body = html`<p id="preview"><strong id="preview-count">${count}</strong> ${agreed(count, 'set-aside event matches', 'set-aside events match')}
${filter.kind ? html` kind <code>${filter.kind}</code>` : ''}${filter.state ? html` state <code>${filter.state}</code>` : ''}.
Bodies that are not envelopes are left out: there is nothing to reprocess in them.
${count > BULK_LIMIT ? html` The first ${BULK_LIMIT} will be reprocessed; run it again for the rest.` : ''}</p>
${count === 0 ? '' : actionForm(context, `${context.base}/dead-letters/reprocess`, `Reprocess ${Math.min(count, BULK_LIMIT)}`, { kind: filter.kind, state: filter.state, up_to: upTo ?? undefined })}
<p><a href="${context.base}/dead-letters">Back</a></p>`;
    res.type('html').send(layout(context, 'Reprocess dead letters', '/dead-letters', body));
  });
  router.get('/handler-failures/retry', async (req, res) => {
    const context = data.context(req);
    const filter = setAsideFilter(queryOf(req));
    const { count, upTo } = await (
      await data.inbox()
    ).countHandlerFailures({ ...(filter.kind && { kind: filter.kind }), ...(filter.handler && { handler: filter.handler }) });
    const body = html`<p id="preview"><strong id="preview-count">${count}</strong> ${agreed(count, 'handler failure matches', 'handler failures match')}
${filter.kind ? html` kind <code>${filter.kind}</code>` : ''}${filter.handler ? html` handler <code>${filter.handler}</code>` : ''}.</p>
${count === 0 ? '' : actionForm(context, `${context.base}/handler-failures/retry`, `Retry ${count}`, { kind: filter.kind, handler: filter.handler, up_to: upTo ?? undefined })}
<p><a href="${context.base}/dead-letters">Back</a></p>`;
    res.type('html').send(layout(context, 'Retry handler failures', '/dead-letters', body));
  });

  deadLetterActions(router, data);
}

/** Actions (POST, behind the CSRF check and refused in read-only mode by the router). */
function deadLetterActions(router: Router, data: ConsoleData): void {
  const back = (req: Request, query: Record<string, number>) => href(req.baseUrl, '/dead-letters', query);
  router.post('/dead-letters/reprocess', async (req, res) => {
    const form = (req.body ?? {}) as Record<string, unknown>;
    const filter = setAsideFilter(form);
    const upTo = idParam(form.up_to);
    const ids = await (
      await data.inbox()
    ).eventIds(
      {
        state: filter.state ?? SET_ASIDE,
        verdict: 'accepted',
        ...(filter.kind && { kind: filter.kind }),
        ...(upTo !== undefined && { upTo }),
      },
      BULK_LIMIT,
    );
    const result = ids.length === 0 ? { requeued: [], skipped: [] } : await data.source.deadLetters.reprocess(ids);
    res.redirect(303, back(req, { requeued: result.requeued.length, skipped: result.skipped.length }));
  });
  router.post('/dead-letters/:id/reprocess', async (req, res) => {
    const id = idParam(req.params.id);
    const result = id === undefined ? { requeued: [], skipped: [] } : await data.source.deadLetters.reprocess([id]);
    res.redirect(303, back(req, { requeued: result.requeued.length, skipped: result.skipped.length }));
  });
  router.post('/handler-failures/retry', async (req, res) => {
    const form = (req.body ?? {}) as Record<string, unknown>;
    const filter = setAsideFilter(form);
    const upTo = idParam(form.up_to);
    const inbox = await data.inbox();
    const failureFilter = {
      ...(filter.kind && { kind: filter.kind }),
      ...(filter.handler && { handler: filter.handler }),
      ...(upTo !== undefined && { upTo }),
    };
    const ids = (await inbox.handlerFailures(failureFilter, BULK_LIMIT)).map((f) => f.failure_id);
    const result = ids.length === 0 ? { retried: [], skipped: [] } : await data.source.deadLetters.retryHandlers(ids);
    res.redirect(303, back(req, { retried: result.retried.length, skipped: result.skipped.length }));
  });
  router.post('/handler-failures/:id/retry', async (req, res) => {
    const id = idParam(req.params.id);
    const result = id === undefined ? { retried: [], skipped: [] } : await data.source.deadLetters.retryHandlers([id]);
    res.redirect(303, back(req, { retried: result.retried.length, skipped: result.skipped.length }));
  });
}

/** The events set aside and the handler failures, filtered, each with its action. */
async function deadLettersPage(data: ConsoleData, req: Request, res: Response): Promise<void> {
  const context = data.context(req);
  const inbox = await data.inbox();
  const filter = setAsideFilter(queryOf(req));
  const eventFilter = { state: filter.state ?? SET_ASIDE, ...(filter.kind && { kind: filter.kind }) };
  const [page, kinds, failures] = await Promise.all([
    inbox.listEvents({ ...eventFilter, limit: 100 }),
    inbox.kinds(),
    inbox.handlerFailures({ ...(filter.handler && { handler: filter.handler }), ...(filter.kind && { kind: filter.kind }) }, 100),
  ]);
  const details = page.events.map((e) => shownSummary(e, context.reveal));
  const query = { kind: filter.kind, state: filter.state, handler: filter.handler };
  const done = ['requeued', 'skipped', 'retried'].filter((k) => idParam(req.query[k]) !== undefined);
  const body = html`
${done.length === 0 ? '' : html`<p class="notice" id="notice">${done.map((k) => `${idParam(req.query[k])} ${k}`).join(', ')}.</p>`}
${filterForm(context, '/dead-letters', query, kinds, SET_ASIDE, [['handler', 'handler']])}
${revealNote(context, href(context.base, '/dead-letters', query), href(context.base, '/dead-letters', { ...query, reveal: 1 }))}
<h2 id="events-set-aside">Events set aside</h2>
<p>Unknown kinds wait for a version that knows them; dead events wait for their body to be mended. Reprocessing is idempotent.</p>
${context.csrf === undefined ? '' : html`<p><a class="button" id="reprocess-all" href="${href(context.base, '/dead-letters/reprocess', { kind: filter.kind, state: filter.state })}">Reprocess all that match…</a></p>`}
${
  details.length === 0
    ? html`<p class="empty">Nothing set aside.</p>`
    : html`<table class="dead-letters"><thead><tr><th>#</th><th>received</th><th>kind</th><th>state</th><th>reasons</th><th></th></tr></thead><tbody>
${details.map(
  (e) => html`<tr data-inbox-id="${e.inbox_id}">
<td><a href="${context.base}/events/${e.inbox_id}">${e.inbox_id}</a></td><td>${when(e.received_at)}</td><td>${e.kind ?? html`<em>not an event</em>`}</td>
<td><span class="state ${e.state}">${e.state}</span></td>
<td><ul class="reasons">${e.reasons.map((r) => html`<li><code>${r.path || '(body)'}</code> ${r.message}</li>`)}</ul></td>
<td>${e.verdict === 'accepted' ? actionForm(context, `${context.base}/dead-letters/${e.inbox_id}/reprocess`, 'Reprocess') : html`<span class="note">not an envelope</span>`}</td>
</tr>`,
)}</tbody></table>`
}
<h2 id="handler-failures">Handler failures</h2>
<p>The event is projected; one of your handlers kept failing on it. Retry once the handler is fixed.</p>
${context.csrf === undefined ? '' : html`<p><a class="button" id="retry-all" href="${href(context.base, '/handler-failures/retry', { kind: filter.kind, handler: filter.handler })}">Retry all that match…</a></p>`}
${
  failures.length === 0
    ? html`<p class="empty">No handler failure.</p>`
    : html`<table class="handler-failures"><thead><tr><th>failure</th><th>event</th><th>kind</th><th>handler</th><th>error</th><th>attempts</th><th>failed</th><th></th></tr></thead><tbody>
${failures.map(
  (f) => html`<tr data-failure-id="${f.failure_id}">
<td>${f.failure_id}</td><td><a href="${context.base}/events/${f.inbox_id}">${f.inbox_id}</a></td><td>${f.kind ?? '—'}</td><td>${f.handler}</td>
<td class="error">${shownError(f.error, context.reveal)}</td><td>${f.attempts}</td><td>${when(f.failed_at)}</td>
<td>${actionForm(context, `${context.base}/handler-failures/${f.failure_id}/retry`, 'Retry')}</td></tr>`,
)}</tbody></table>`
}`;
  res.type('html').send(layout(context, 'Dead letters and handler failures', '/dead-letters', body));
}
