// Server-rendered HTML where every interpolated value is escaped unless it is already markup:
// names, payloads and reasons are attacker data, so escaping is the default, not a habit.
import { DEFAULT_ACCOUNT } from '../receive/account.js';

/** Markup that is safe to insert as is (built by `html`). */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function render(value: unknown): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(value);
}

/** A template whose interpolations are escaped; arrays are joined; null, undefined and false render nothing. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}

/** A URL with query parameters (empty ones left out), relative to the console's mount point. */
export function href(base: string, path: string, query: Record<string, string | number | undefined | null> = {}): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query))
    if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  const text = search.toString();
  return `${base}${path}${text === '' ? '' : `?${text}`}`;
}

const MASKED_NOTE = "Personal data is masked: only ids, kinds, statuses, scores, dates and the campaign's own fields are shown.";

/** Whether personal data is masked, with the link that flips it; a read-only console has no reveal. */
export function revealNote(context: PageContext, maskHref: string, revealHref: string): SafeHtml {
  if (context.reveal) return html`<p class="reveal">Personal data shown. <a href="${maskHref}">Mask it</a></p>`;
  if (context.csrf === undefined) return html`<p class="reveal">${MASKED_NOTE} (Read-only console.)</p>`;
  return html`<p class="reveal">${MASKED_NOTE} <a id="reveal" href="${revealHref}">Reveal</a></p>`;
}

/** An account as the switcher shows it: never its webhook path. */
export interface AccountChoice {
  account: string;
  name: string | null;
  state: 'active' | 'disabled';
}

export interface PageContext {
  /** Where the pages of the account are (`req.baseUrl`): `/ops` for the default account, `/ops/a/<account>` for another. */
  base: string;
  /** Where the console is mounted, e.g. `/ops`. */
  root: string;
  /** The account the page shows and acts on. */
  account: string;
  /** Every account, the default first, for the switcher. */
  accounts: AccountChoice[];
  /** The CSRF token for forms (actions), or undefined in read-only mode. */
  csrf: string | undefined;
  /** Whether personal data is shown unmasked (never on a read-only console). */
  reveal: boolean;
  /** The page's path below `base` (`/events`), which the switcher keeps; undefined on a page of no account (`/accounts`). */
  page: string | undefined;
}

const NAV: Array<[path: string, label: string]> = [
  ['/', 'Overview'],
  ['/events', 'Events'],
  ['/dead-letters', 'Dead letters'],
  ['/campaigns', 'Campaigns'],
  ['/destinations', 'Destinations'],
  ['/erasures', 'Erasures'],
];

/** The pages of an account: the mount point for the default account, `<mount>/a/<account>` for another. */
export function accountBase(root: string, account: string): string {
  return account === DEFAULT_ACCOUNT ? root : `${root}/a/${encodeURIComponent(account)}`;
}

function accountLabel(choice: AccountChoice): string {
  return `${choice.account}${choice.name === null || choice.name === '' ? '' : ` (${choice.name})`}`;
}

function currentLabel(context: PageContext): string {
  const current = context.accounts.find((a) => a.account === context.account);
  return current === undefined ? context.account : accountLabel(current);
}

/** The account a page belongs to, as its title and heading name it: always another's, the default's once there are others. */
function namedAccount(context: PageContext): string | undefined {
  if (context.page === undefined) return undefined;
  return context.account !== DEFAULT_ACCOUNT || context.accounts.length > 1 ? currentLabel(context) : undefined;
}

/**
 * The account switcher: the same page of each account, with its state; no script needed. The
 * query stays behind: its filters name the first account's campaigns and candidates.
 */
function switcher(context: PageContext): SafeHtml {
  const page = context.page ?? '/';
  return html`<details class="accounts" id="account-switcher">
<summary>Account <strong id="current-account" data-account="${context.account}">${currentLabel(context)}</strong></summary>
<ul>${context.accounts.map(
    (a) =>
      html`<li><a href="${accountBase(context.root, a.account)}${page}" data-account="${a.account}"${a.account === context.account ? html` aria-current="true"` : ''}>${accountLabel(a)}</a> <span class="state ${a.state}">${a.state}</span></li>`,
  )}
<li><a href="${context.root}/accounts">All accounts…</a></li></ul>
</details>`;
}

/**
 * The page frame: stylesheets, navigation, and scripts from the console's own routes only (CSP).
 * Assets are served once, at the mount point: an account's pages, one level deeper, ask there too.
 */
export function layout(context: PageContext, title: string, current: string, body: SafeHtml, options: { chart?: boolean } = {}): string {
  const account = namedAccount(context);
  const assets = `${context.root}/assets`;
  return `<!doctype html>${
    html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}${account === undefined ? '' : ` · ${account}`} · prequal-hooks</title>
<link rel="icon" href="data:,">
${options.chart ? html`<link rel="stylesheet" href="${assets}/uPlot.min.css">` : ''}
<link rel="stylesheet" href="${assets}/console.css">
</head>
<body>
<header>
<span class="brand">prequal-hooks</span>
<nav>${NAV.map(([path, label]) => html`<a href="${context.base}${path === '/' ? '/' : path}"${current === path ? html` aria-current="page"` : ''}>${label}</a>`)}<a href="${context.root}/accounts"${current === '/accounts' ? html` aria-current="page"` : ''}>Accounts</a></nav>
${switcher(context)}
${context.csrf === undefined ? html`<span class="badge">read-only</span>` : ''}
</header>
<main>
<h1>${title}${account === undefined ? '' : html` <span class="account" id="page-account">${account}</span>`}</h1>
${body}
</main>
${options.chart ? html`<script src="${assets}/uPlot.iife.min.js"></script>` : ''}
<script src="${assets}/console.js"></script>
</body>
</html>`.text
  }`;
}

/** A POST form with the CSRF token, or nothing in read-only mode. */
export function actionForm(
  context: PageContext,
  action: string,
  label: string,
  fields: Record<string, string | number | undefined> = {},
  className = '',
): SafeHtml | '' {
  if (context.csrf === undefined) return '';
  return html`<form method="post" action="${action}" class="inline ${className}">
<input type="hidden" name="_csrf" value="${context.csrf}">
${Object.entries(fields).map(([name, value]) => (value === undefined || value === '' ? '' : html`<input type="hidden" name="${name}" value="${value}">`))}
<button type="submit">${label}</button>
</form>`;
}

/** `2026-11-20T10:00:00.000Z` as `2026-11-20 10:00:00Z`, readable and still unambiguous. */
export function when(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  return iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}
