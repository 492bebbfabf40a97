// Events: the inbox newest first, filtered; one event's body (masked but for the fields known to
// hold no personal data, until revealed), verdict, reasons and the secret that matched.
import type { Request, Router } from 'express';
import { INBOX_STATES, type EventListParameters, type EventPage, type EventSummary } from '../query/index.js';
import type { InboxState } from '../store/inbox-state.js';
import { actionForm, href, html, layout, revealNote, when, type PageContext } from './html.js';
import { MASKED, showBody, shownIssue, shownSummary } from './mask.js';
import { idParam, param, type ConsoleData } from './source.js';

const FILTERS = ['kind', 'state', 'campaign', 'candidate', 'from', 'to'] as const;

function eventFilter(req: Request): Record<(typeof FILTERS)[number], string | undefined> {
  return Object.fromEntries(FILTERS.map((name) => [name, param(req, name)])) as Record<(typeof FILTERS)[number], string | undefined>;
}

function listParameters(req: Request): EventListParameters {
  const filter = eventFilter(req);
  const limit = idParam(req.query.limit);
  const before = idParam(req.query.before);
  return {
    ...(filter.kind && { kind: filter.kind }),
    ...(filter.state && { state: filter.state as InboxState }),
    ...(filter.campaign && { campaign: filter.campaign }),
    ...(filter.candidate && { candidate: filter.candidate }),
    ...(filter.from && { from: filter.from }),
    ...(filter.to && { to: filter.to }),
    ...(before !== undefined && { before }),
    limit: limit ?? 50,
  };
}

/** The fingerprint of the secret that verified the event: to the full console only (a viewer could test guesses of a weak secret against it). */
function secretMatched(context: PageContext, fingerprint: string | null): string {
  if (fingerprint === null) return 'none (unsigned)';
  return context.csrf === undefined ? 'one of the webhook secrets (its fingerprint is shown to the full console only)' : fingerprint;
}

/** An id as a link to its page; a masked one (an unknown kind's) as text. */
function idLink(context: PageContext, path: string, id: string | null) {
  if (id === null) return '—';
  return id === MASKED ? id : html`<a href="${context.base}/${path}/${encodeURIComponent(id)}">${id}</a>`;
}

/** The events table, shared with the candidate page. */
export function eventsTable(context: PageContext, listed: EventSummary[], options: { showCandidate?: boolean } = {}) {
  if (listed.length === 0) return html`<p class="empty">No event matches.</p>`;
  const events = listed.map((e) => shownSummary(e, context.reveal));
  return html`<table class="events">
<thead><tr><th>#</th><th>received</th><th>kind</th><th>state</th><th>campaign</th>${options.showCandidate === false ? '' : html`<th>candidate</th>`}<th>attempts</th></tr></thead>
<tbody>${events.map(
    (e) => html`<tr data-inbox-id="${e.inbox_id}" data-state="${e.state}">
<td><a href="${context.base}/events/${e.inbox_id}">${e.inbox_id}</a></td>
<td>${when(e.received_at)}</td>
<td class="kind">${e.kind ?? html`<em>not an event</em>`}</td>
<td><span class="state ${e.state}">${e.state}</span></td>
<td>${idLink(context, 'campaigns', e.campaign_id)}</td>
${options.showCandidate === false ? '' : html`<td>${idLink(context, 'candidates', e.candidate_id)}</td>`}
<td>${e.attempts}</td>
</tr>`,
  )}</tbody></table>`;
}

export function filterForm(
  context: PageContext,
  action: string,
  values: Record<string, string | undefined>,
  kinds: string[],
  states: readonly string[],
  extra: Array<[name: string, label: string, placeholder?: string]> = [],
) {
  const select = (name: string, options: readonly string[]) =>
    html`<label>${name} <select name="${name}"><option value="">any</option>${options.map((o) => html`<option${values[name] === o ? html` selected` : ''}>${o}</option>`)}</select></label>`;
  return html`<form method="get" action="${context.base}${action}" class="filters">
${select('kind', kinds)}
${select('state', states)}
${extra.map(([name, label, placeholder]) => html`<label>${label} <input name="${name}" value="${values[name] ?? ''}" size="18"${placeholder ? html` placeholder="${placeholder}"` : ''}></label>`)}
<button type="submit">Filter</button> <a href="${context.base}${action}">clear</a>
</form>`;
}

/** Which rows a filter that no index serves searched for this page, and that older » searches on. */
function searchedNote(page: EventPage) {
  if (page.searched === null) return '';
  const { from, to } = page.searched;
  const on = page.next === null ? '' : ' "older »" searches on.';
  return html`<p class="note" id="searched">Searched inbox rows ${from.toLocaleString('en')}–${to.toLocaleString('en')}: a filter on a kind, a campaign, a verdict or the projected state tests each row, so each page searches a bounded range.${on}</p>`;
}

export function eventRoutes(router: Router, data: ConsoleData): void {
  router.get('/api/events', async (req, res) => {
    const page = await (await data.inbox()).listEvents(listParameters(req));
    const { reveal } = data.context(req);
    res.json({ ...page, events: page.events.map((e) => shownSummary(e, reveal)) });
  });

  router.get('/events', async (req, res) => {
    const context = data.context(req);
    const inbox = await data.inbox();
    const parameters = listParameters(req);
    const [page, kinds] = await Promise.all([inbox.listEvents(parameters), inbox.kinds()]);
    const filter = eventFilter(req);
    const body = html`
${filterForm(context, '/events', filter, kinds, INBOX_STATES, [
  ['campaign', 'campaign'],
  ['candidate', 'candidate'],
  ['from', 'from (ISO, UTC)', '2026-11-20T10:00Z'],
  ['to', 'to (ISO, UTC)', '2026-11-20T11:00Z'],
])}
${eventsTable(context, page.events)}
${searchedNote(page)}
<nav class="pages">
${parameters.before === undefined ? '' : html`<a href="${href(context.base, '/events', filter)}">« newest</a>`}
${page.next === null ? '' : html`<a rel="next" href="${href(context.base, '/events', { ...filter, before: page.next, limit: parameters.limit })}">older »</a>`}
</nav>`;
    res.type('html').send(layout(context, 'Events', '/events', body));
  });

  router.get('/events/:id', async (req, res) => {
    const context = data.context(req);
    const id = idParam(req.params.id);
    const event = id === undefined ? undefined : await (await data.inbox()).getEvent(id);
    if (event === undefined) {
      res
        .status(404)
        .type('html')
        .send(layout(context, 'Event not found', '/events', html`<p>No inbox row ${req.params.id}.</p>`));
      return;
    }
    const settable = (event.state === 'unknown' || event.state === 'dead') && event.verdict === 'accepted';
    const self = `${context.base}/events/${event.inbox_id}`;
    const body = html`
<dl class="facts">
<dt>kind</dt><dd>${event.kind ?? '—'}</dd>
<dt>state</dt><dd><span class="state ${event.state}" id="event-state">${event.state}</span></dd>
<dt>verdict</dt><dd id="event-verdict">${event.verdict}</dd>
<dt>secret matched</dt><dd id="event-secret">${secretMatched(context, event.secret_id)}</dd>
<dt>received</dt><dd>${when(event.received_at)}</dd>
<dt>processed</dt><dd>${when(event.processed_at)}</dd>
<dt>attempts</dt><dd>${event.attempts}</dd>
<dt>identity</dt><dd><code>${event.identity ?? '—'}</code></dd>
</dl>
${event.reasons.length === 0 ? '' : html`<h2>Reasons</h2><ul class="reasons" id="event-reasons">${event.reasons.map((r) => shownIssue(r, context.reveal)).map((r) => html`<li><code>${r.path || '(body)'}</code> ${r.message}</li>`)}</ul>`}
${settable ? actionForm(context, `${context.base}/dead-letters/${event.inbox_id}/reprocess`, 'Reprocess this event') : ''}
<h2>Payload</h2>
${revealNote(context, self, `${self}?reveal=1`)}
<pre class="payload" id="payload">${showBody(event.raw, context.reveal)}</pre>`;
    res.type('html').send(layout(context, `Event ${event.inbox_id}`, '/events', body));
  });
}
