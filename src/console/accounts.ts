// The accounts of the console: which account a request's pages are for (the default account at the
// mount point, another at `<mount>/a/<account>`), the 404 for an account that does not exist, and
// the overview of every account. A webhook path holds the account's route key, which keeps it
// unguessable: only the full token sees it, on this overview, and never in a URL.
import type { Request, RequestHandler, Response, Router } from 'express';
import { DEFAULT_ACCOUNT, isAccountId } from '../receive/account.js';
import { accountBase, html, layout, type AccountChoice, type PageContext } from './html.js';
import { scopedSource, setRequestAccounts, rootOf, type DashboardSource } from './source.js';

/** An account as the console lists it; `webhookPath` is shown to the full token only. */
type Listed = AccountChoice & { webhookPath: string };

const DEFAULT_ONLY: Listed[] = [{ account: DEFAULT_ACCOUNT, name: null, state: 'active', webhookPath: '/webhooks' }];

/** Every account, the default first: the registry's list, or the default account alone. */
async function listAccounts(source: DashboardSource): Promise<Listed[]> {
  const registry = await source.accounts?.();
  if (registry === undefined) return DEFAULT_ONLY;
  return (await registry.list()).map(({ account, name, state, webhookPath }) => ({ account, name, state, webhookPath }));
}

const choices = (listed: Listed[]): AccountChoice[] => listed.map(({ account, name, state }) => ({ account, name, state }));

/** The frame of a page that belongs to no account (the overview, the 404). */
function rootContext(req: Request, accounts: AccountChoice[], csrf: string | undefined): PageContext {
  const root = rootOf(req);
  return { base: root, root, account: DEFAULT_ACCOUNT, accounts, csrf, reveal: false, page: undefined };
}

/**
 * Resolves the account of the request (`req.params.account`, else the default account) and hands
 * the request to that account's pages; an account id that is malformed or not registered is a 404.
 */
export function accountPages(
  source: DashboardSource,
  pagesOf: (account: string) => Router,
  csrf: (account: string) => string | undefined,
): RequestHandler {
  return async (req, res, next) => {
    const asked = typeof req.params.account === 'string' ? req.params.account : DEFAULT_ACCOUNT;
    const listed = await listAccounts(source);
    const accounts = choices(listed);
    if (!isAccountId(asked) || !accounts.some((a) => a.account === asked))
      return unknownAccount(req, res, asked, accounts, csrf(DEFAULT_ACCOUNT));
    setRequestAccounts(req, accounts);
    pagesOf(asked)(req, res, next);
  };
}

function unknownAccount(req: Request, res: Response, asked: string, accounts: AccountChoice[], csrf: string | undefined): void {
  const named = isAccountId(asked) ? html`No account <code>${asked}</code> is registered.` : html`This is not an account id.`;
  if (req.path.startsWith('/api/')) {
    res.status(404).json({ error: { code: 'UNKNOWN_ACCOUNT', message: 'No account with this id is registered.', details: {} } });
    return;
  }
  const body = html`<p id="unknown-account">${named} <a href="${rootOf(req)}/accounts">All accounts</a></p>`;
  res
    .status(404)
    .type('html')
    .send(layout(rootContext(req, accounts, csrf), 'Account not found', '/accounts', body));
}

interface AccountRow extends Listed {
  counts: Record<'pending' | 'projected' | 'unknown' | 'dead' | 'handler_failures', number>;
}

/** Each account with its inbox counts, read side by side (one grouped count per account). */
async function accountRows(source: DashboardSource): Promise<AccountRow[]> {
  const listed = await listAccounts(source);
  const counts = await Promise.all(listed.map((a) => scopedSource(source, a.account).counts()));
  return listed.map((a, i) => {
    const { pending, projected, unknown, dead, handler_failures } = counts[i]!;
    return { ...a, counts: { pending, projected, unknown, dead, handler_failures } };
  });
}

/** The overview of every account: `/accounts` and `/api/accounts`; webhook paths for the full token only. */
export function accountsRoutes(router: Router, source: DashboardSource, csrf: (account: string) => string | undefined): void {
  const shown = (row: AccountRow) => (csrf(row.account) === undefined ? { ...row, webhookPath: undefined } : row);
  router.get('/api/accounts', async (_req, res) => {
    res.json({ accounts: (await accountRows(source)).map(shown) });
  });
  router.get('/accounts', async (req, res) => {
    const rows = await accountRows(source);
    const full = csrf(DEFAULT_ACCOUNT) !== undefined;
    const root = rootOf(req);
    const figure = (row: AccountRow, state: 'pending' | 'projected' | 'unknown' | 'dead') =>
      html`<td class="num" data-state="${state}"><a href="${accountBase(root, row.account)}/events?state=${state}">${row.counts[state]}</a></td>`;
    const body = html`<table class="accounts" id="accounts"><thead><tr><th>account</th><th>name</th><th>state</th>
<th>pending</th><th>projected</th><th>dead</th><th>unknown</th><th>handler failures</th>${full ? html`<th>webhook path</th>` : ''}</tr></thead><tbody>
${rows.map(
  (
    row,
  ) => html`<tr data-account="${row.account}"><td><a href="${accountBase(root, row.account)}/">${row.account}</a></td><td>${row.name ?? '—'}</td>
<td><span class="state ${row.state}">${row.state}</span></td>${figure(row, 'pending')}${figure(row, 'projected')}${figure(row, 'dead')}${figure(row, 'unknown')}
<td class="num" data-state="handler_failures"><a href="${accountBase(root, row.account)}/dead-letters#handler-failures">${row.counts.handler_failures}</a></td>
${full ? html`<td><code class="webhook-path">${row.webhookPath}</code></td>` : ''}</tr>`,
)}</tbody></table>
<p class="note">${full ? 'A webhook path holds its account\u2019s route key: give it to that account\u2019s service settings only.' : 'Webhook paths are shown to the full console only.'}</p>`;
    res.type('html').send(layout(rootContext(req, choices(rows), csrf(DEFAULT_ACCOUNT)), 'Accounts', '/accounts', body));
  });
}
