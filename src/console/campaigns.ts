// Campaigns with the service's stats, a campaign's candidates with the service's sort, filters
// and pagination, and one candidate: interview responses and its own events from the inbox.
import type { Request, Response, Router } from 'express';
import { CANDIDATE_SORTS, CANDIDATE_STATUSES, type CandidateListParameters } from '../query/index.js';
import { href, html, layout, revealNote, when, type PageContext } from './html.js';
import { count } from '../words.js';
import { shown } from './mask.js';
import { eventsTable } from './events.js';
import { idParam, param, type ConsoleData } from './source.js';

function score(value: number | null): string {
  return value === null ? '—' : String(Math.round(value * 100) / 100);
}

function fullName(context: PageContext, first: string | null, last: string | null): string {
  const name = [shown('first_name', first, context.reveal), shown('last_name', last, context.reveal)]
    .filter((p) => p !== null && p !== '')
    .join(' ');
  return name === '' ? '—' : name;
}

export function campaignRoutes(router: Router, data: ConsoleData): void {
  router.get('/campaigns', (req, res) => campaignsPage(data, req, res));
  router.get('/campaigns/:id', (req, res) => campaignPage(data, req, res));
  router.get('/candidates/:id', (req, res) => candidatePage(data, req, res));
}

/** The campaigns with the service's stats, a page at a time (newest first), `after` paging on. */
async function campaignsPage(data: ConsoleData, req: Request, res: Response): Promise<void> {
  const context = data.context(req);
  const after = param(req, 'after');
  const limit = idParam(req.query.limit);
  const page = await data.source.query.listCampaignPage({ after, limit: limit ?? 50 });
  const { campaigns } = page;
  const list =
    campaigns.length === 0
      ? html`<p class="empty">${after === undefined ? 'No campaign yet.' : 'No campaign after this one.'}</p>`
      : html`<table class="campaigns"><thead><tr><th>campaign</th><th>job title</th><th>contract</th><th>status</th><th>created</th><th>candidates</th><th>completed</th><th>average score</th></tr></thead><tbody>
${campaigns.map(
  (c) => html`<tr data-campaign-id="${c.campaign_id}">
<td><a href="${context.base}/campaigns/${encodeURIComponent(c.campaign_id)}">${c.campaign_id}</a></td><td>${c.job_title ?? '—'}</td><td>${c.contract_type ?? '—'}</td>
<td>${c.status ?? '—'}</td><td>${when(c.created_at)}</td><td class="num">${c.stats.total_candidates}</td><td class="num">${c.stats.interviews_completed}</td><td class="num">${score(c.stats.average_score)}</td></tr>`,
)}</tbody></table>`;
  const body = html`${list}
<nav class="pages" id="pagination">
${after === undefined ? '' : html`<a href="${href(context.base, '/campaigns')}">« newest</a>`}
${page.next === null ? '' : html`<a rel="next" href="${href(context.base, '/campaigns', { after: page.next, limit })}">older »</a>`}
</nav>`;
  res.type('html').send(layout(context, 'Campaigns', '/campaigns', body));
}

/** A campaign: its stats and its candidates with the service's sort, filters and pagination. */
async function campaignPage(data: ConsoleData, req: Request<{ id: string }>, res: Response): Promise<void> {
  const context = data.context(req);
  const id = req.params.id;
  const campaign = await data.source.query.getCampaign(id);
  if (campaign === undefined) {
    res
      .status(404)
      .type('html')
      .send(layout(context, 'Campaign not found', '/campaigns', html`<p>No event named campaign <code>${id}</code>.</p>`));
    return;
  }
  const values = Object.fromEntries(['page', 'per_page', 'sort', 'status', 'min_score'].map((k) => [k, param(req, k)])) as Record<
    string,
    string | undefined
  >;
  const parameters = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as CandidateListParameters;
  const list = await data.source.query.listCandidates(id, parameters);
  const self = `/campaigns/${encodeURIComponent(id)}`;
  const { pagination } = list;
  const pageLink = (page: number, label: string) =>
    html`<a href="${href(context.base, self, { ...values, page, reveal: context.reveal ? 1 : undefined })}">${label}</a>`;
  const body = html`
<dl class="facts" id="campaign-stats">
<dt>job title</dt><dd>${campaign.job_title ?? '—'}</dd>
<dt>contract</dt><dd>${campaign.contract_type ?? '—'}</dd>
<dt>status</dt><dd>${campaign.status ?? '—'}</dd>
<dt>created</dt><dd>${when(campaign.created_at)}</dd>
<dt>questions</dt><dd>${campaign.questions_count ?? '—'}</dd>
<dt>candidates</dt><dd id="stat-total">${campaign.stats.total_candidates}</dd>
<dt>interviews completed</dt><dd id="stat-completed">${campaign.stats.interviews_completed}</dd>
<dt>average score</dt><dd id="stat-average">${score(campaign.stats.average_score)}</dd>
</dl>
<p><a href="${href(context.base, '/events', { campaign: id })}">This campaign's events</a></p>
<h2>Candidates</h2>
<form method="get" action="${context.base}${self}" class="filters">
<label>sort <select name="sort">${CANDIDATE_SORTS.map((s) => html`<option${(values.sort ?? 'date_desc') === s ? html` selected` : ''}>${s}</option>`)}</select></label>
<label>status <select name="status"><option value="">any</option>${CANDIDATE_STATUSES.map((s) => html`<option${values.status === s ? html` selected` : ''}>${s}</option>`)}</select></label>
<label>min score <input name="min_score" value="${values.min_score ?? ''}" size="4"></label>
<label>per page <input name="per_page" value="${values.per_page ?? ''}" size="4" placeholder="50"></label>
${context.reveal ? html`<input type="hidden" name="reveal" value="1">` : ''}
<button type="submit">Apply</button>
</form>
${revealNote(context, href(context.base, self, values), href(context.base, self, { ...values, reveal: 1 }))}
${
  list.candidates.length === 0
    ? html`<p class="empty">No candidate matches.</p>`
    : html`<table class="candidates"><thead><tr><th>candidate</th><th>name</th><th>e-mail</th><th>phone</th><th>status</th><th>score</th><th>interview</th></tr></thead><tbody>
${list.candidates.map(
  (c) => html`<tr data-candidate-id="${c.candidate_id}">
<td><a href="${href(context.base, `/candidates/${encodeURIComponent(c.candidate_id)}`, { reveal: context.reveal ? 1 : undefined })}">${c.candidate_id}</a></td>
<td class="name">${fullName(context, c.first_name, c.last_name)}</td><td>${shown('email', c.email, context.reveal) ?? '—'}</td><td>${shown('phone', c.phone, context.reveal) ?? '—'}</td>
<td>${c.status ?? '—'}</td><td class="num">${score(c.interview_score)}</td><td>${when(c.interview_date)}</td></tr>`,
)}</tbody></table>`
}
<nav class="pages" id="pagination">page ${pagination.page} of ${Math.max(1, pagination.total_pages)} (${count(pagination.total, 'candidate')})
${pagination.page > 1 ? pageLink(pagination.page - 1, '« previous') : ''} ${pagination.page < pagination.total_pages ? pageLink(pagination.page + 1, 'next »') : ''}</nav>`;
  res.type('html').send(layout(context, `Campaign ${id}`, '/campaigns', body));
}

/** One candidate: the projected row, interview responses and the events naming them. */
async function candidatePage(data: ConsoleData, req: Request<{ id: string }>, res: Response): Promise<void> {
  const context = data.context(req);
  const id = req.params.id;
  const candidate = await data.source.query.getCandidate(id);
  if (candidate === undefined) {
    res
      .status(404)
      .type('html')
      .send(layout(context, 'Candidate not found', '/campaigns', html`<p>No event named candidate <code>${id}</code>.</p>`));
    return;
  }
  const history = await (await data.inbox()).listEvents({ candidate: id, limit: 200 });
  const self = `/candidates/${encodeURIComponent(id)}`;
  const row = (label: string, value: unknown) =>
    html`<dt>${label}</dt><dd>${value === null || value === undefined || value === '' ? '—' : value}</dd>`;
  // Each field by what it may hold: free text (availability, salary, the analysis) masked until revealed.
  const field = (label: string, key: keyof typeof candidate) => row(label, shown(key, candidate[key], context.reveal));
  const body = html`
${revealNote(context, `${context.base}${self}`, `${context.base}${self}?reveal=1`)}
${context.csrf === undefined ? '' : html`<p class="actions"><a class="button" id="export" href="${context.base}${self}/export" download>Export (JSON)</a> <a class="button danger" id="erase" href="${context.base}${self}/erase">Erase…</a></p>`}
<dl class="facts" id="candidate">
${row('name', fullName(context, candidate.first_name, candidate.last_name))}
${field('e-mail', 'email')}
${field('phone', 'phone')}
<dt>campaign</dt><dd>${candidate.campaign_id === null ? '—' : html`<a href="${context.base}/campaigns/${encodeURIComponent(candidate.campaign_id)}">${candidate.campaign_id}</a>`}</dd>
${row('status', candidate.status)}
${row('sourced', candidate.is_sourced ? 'yes' : 'no')}
${row('score', score(candidate.interview_score))}
${row('interview', when(candidate.interview_date))}
${row('started', when(candidate.interview_started_at))}
${field('failure reason', 'failure_reason')}
${field('availability', 'availability')}
${field('available from', 'availability_start')}
${field('salary expectation', 'salary_expectation')}
${field('alignment', 'candidate_alignment')}
${field('strengths', 'strengths')}
${field('concerns', 'concerns')}
</dl>
<h2>Interview responses</h2>
${
  candidate.responses.length === 0
    ? html`<p class="empty">No extended interview received.</p>`
    : html`<ol class="responses" id="responses">${candidate.responses.map(
        (
          r,
        ) => html`<li><p class="question">${shown('question', r.question, context.reveal) ?? '—'}</p><blockquote>${shown('answer', r.answer, context.reveal) ?? '—'}</blockquote>
<p class="note">score <strong>${score(r.score)}</strong> · ${shown('explanation', r.explanation, context.reveal) ?? ''}</p></li>`,
      )}</ol>`
}
<h2>Events about this candidate</h2>
${eventsTable(context, history.events, { showCandidate: false })}`;
  res.type('html').send(layout(context, `Candidate ${id}`, '/campaigns', body));
}
