// A candidate's personal data in the console: export it (GDPR article 15), erase it (article 17)
// after the reason is given and the id typed again, and the audit trail of erasures (no personal
// data). Read-only consoles offer none of the three actions: export reveals personal data.
import type { Request, Response, Router } from 'express';
import { UnknownCandidateError } from '../privacy/index.js';
import { href, html, layout, when } from './html.js';
import { count } from '../words.js';
import type { ConsoleData } from './source.js';

export function privacyRoutes(router: Router, data: ConsoleData): void {
  router.get('/candidates/:id/export', (req: Request<{ id: string }>, res) => exportCandidate(data, req, res));
  router.get('/candidates/:id/erase', (req: Request<{ id: string }>, res) => eraseForm(data, req, res));
  router.post('/candidates/:id/erase', (req: Request<{ id: string }>, res) => erase(data, req, res));
  router.get('/erasures', (req, res) => erasuresPage(data, req, res));
}

function refuseReadOnly(data: ConsoleData, req: Request, res: Response): boolean {
  if (data.context(req).csrf !== undefined) return false;
  res.status(403).json({
    error: { code: 'FORBIDDEN', message: 'This console is read-only: personal data is neither exported nor erased here.', details: {} },
  });
  return true;
}

/** Everything held about the candidate, as a JSON download. */
async function exportCandidate(data: ConsoleData, req: Request<{ id: string }>, res: Response): Promise<void> {
  if (refuseReadOnly(data, req, res)) return;
  const document = await data.source.exportCandidate(req.params.id);
  const name = `candidate-${req.params.id.replace(/[^A-Za-z0-9_.-]/g, '_')}.json`;
  res
    .set('Content-Disposition', `attachment; filename="${name}"`)
    .set('Cache-Control', 'no-store')
    .type('json')
    .send(`${JSON.stringify(document, null, 2)}\n`);
}

/** The confirmation: the reason, and the candidate id typed again. */
function eraseForm(data: ConsoleData, req: Request<{ id: string }>, res: Response, problem?: string): void {
  if (refuseReadOnly(data, req, res)) return;
  const context = data.context(req);
  const id = req.params.id;
  const body = html`
${problem === undefined ? '' : html`<p class="notice error" id="problem">${problem}</p>`}
<p>Erasing candidate <code>${id}</code> deletes their row and interview responses, redacts every stored event that names them
(kind, timestamp and identity are kept), and records the erasure with your reason. It cannot be undone.
Later events dated before now never bring them back; a webhook dated after is a new contact.</p>
<form method="post" action="${context.base}/candidates/${encodeURIComponent(id)}/erase" class="erase" id="erase-form">
<input type="hidden" name="_csrf" value="${context.csrf!}">
<label>Reason (kept in the audit trail; no personal data) <input name="reason" required size="50"></label>
<label>Type the candidate id again <input name="confirm" required size="40" autocomplete="off"></label>
<button type="submit" class="danger">Erase</button>
</form>
<p><a href="${context.base}/candidates/${encodeURIComponent(id)}">Back</a></p>`;
  res
    .status(problem === undefined ? 200 : 400)
    .type('html')
    .send(layout(context, `Erase candidate ${id}`, '/erasures', body));
}

async function erase(data: ConsoleData, req: Request<{ id: string }>, res: Response): Promise<void> {
  const form = (req.body ?? {}) as Record<string, unknown>;
  const id = req.params.id;
  const reason = typeof form.reason === 'string' ? form.reason.trim() : '';
  if (form.confirm !== id) return eraseForm(data, req, res, 'The id typed again does not match: nothing was erased.');
  if (reason === '') return eraseForm(data, req, res, 'Give a reason: nothing was erased.');
  try {
    const report = await data.source.erase({ candidateId: id }, { reason });
    res.redirect(303, href(req.baseUrl, '/erasures', { erased: report.candidateIds.join(', '), redacted: report.eventsRedacted }));
  } catch (error) {
    if (error instanceof UnknownCandidateError)
      return eraseForm(data, req, res, 'No candidate with this id is known here: nothing was erased.');
    throw error;
  }
}

/** The audit trail: who was erased, when, why, how many events; never a name, e-mail or phone. */
async function erasuresPage(data: ConsoleData, req: Request, res: Response): Promise<void> {
  const context = data.context(req);
  const store = await data.source.store();
  const rows = await store.people.latestErasures(500);
  const erased = typeof req.query.erased === 'string' ? req.query.erased : undefined;
  const body = html`
${erased === undefined ? '' : html`<p class="notice" id="notice">Candidate <code>${erased}</code> erased: ${count(Number(req.query.redacted ?? 0), 'stored event')} redacted.</p>`}
<p>Every erasure, newest first: a data-protection request from the console or the command line, or retention.</p>
${
  rows.length === 0
    ? html`<p class="empty">No erasure yet.</p>`
    : html`<table class="erasures" id="erasures"><thead><tr><th>candidate</th><th>erased</th><th>reason</th><th>events redacted</th></tr></thead><tbody>
${rows.map((r) => html`<tr><td><code>${r.candidate_id}</code></td><td>${when(r.erased_at)}</td><td>${r.reason}</td><td class="num">${r.events_redacted}</td></tr>`)}</tbody></table>`
}`;
  res.type('html').send(layout(context, 'Erasures', '/erasures', body));
}
