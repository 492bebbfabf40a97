// Every GET answer a console gives a token, found as a user would: from the overview, following
// each link of each page (the data routes added, since no page links them), up to a bound. The
// switcher links each account's pages (`/a/<account>/`): their data routes are added too.

export interface Crawled {
  /** The path below the mount point, with its query. */
  path: string;
  status: number;
  /** The answer as sent: raw HTML or JSON text. */
  text: string;
}

export interface CrawlOptions {
  /** e.g. http://127.0.0.1:4000/dashboard */
  base: string;
  authorization: string;
  /** Paths to visit besides those linked (data routes, pages reached by a form). */
  extra?: string[];
  /** Links not to follow (a full token's Reveal and Export, which show personal data by design). */
  skip?: (path: string) => boolean;
  /** The most answers fetched. */
  limit?: number;
}

/** The links of a page that stay in the console, as paths below its mount point. */
function linksOf(text: string, mount: string): string[] {
  const out: string[] = [];
  for (const [, raw] of text.matchAll(/href="([^"]*)"/g)) {
    const href = raw!.replaceAll('&amp;', '&');
    if (!href.startsWith(`${mount}/`) && href !== mount) continue;
    if (href.startsWith(`${mount}/assets/`)) continue;
    out.push(href.slice(mount.length) || '/');
  }
  return out;
}

/** The data routes of an account's pages, below its prefix (`''` for the default account, `/a/<account>`). */
const dataRoutes = (prefix: string) => [`${prefix}/api/overview`, `${prefix}/api/events-per-minute`, `${prefix}/api/events?limit=500`];

/** The account prefixes (`/a/<account>`) that links lead to. */
function accountPrefixes(paths: string[]): string[] {
  return paths.flatMap((path) => /^(\/a\/[^/?#]+)\/$/.exec(path)?.[1] ?? []);
}

/** Every answer reachable from the overview (and `extra`), each fetched once. */
export async function crawlConsole(options: CrawlOptions): Promise<Crawled[]> {
  const mount = new URL(options.base).pathname.replace(/\/$/, '');
  const queue = ['/', ...dataRoutes(''), '/api/accounts', ...(options.extra ?? [])];
  const seen = new Set<string>();
  const answers: Crawled[] = [];
  while (queue.length > 0 && answers.length < (options.limit ?? 400)) {
    const path = queue.shift()!;
    if (seen.has(path) || options.skip?.(path)) continue;
    seen.add(path);
    const answer = await fetch(`${options.base}${path}`, { headers: { Authorization: options.authorization }, redirect: 'manual' });
    const text = await answer.text();
    answers.push({ path, status: answer.status, text });
    if (!(answer.headers.get('content-type') ?? '').startsWith('text/html')) continue;
    const links = linksOf(text, mount);
    queue.push(...links, ...accountPrefixes(links).flatMap(dataRoutes));
  }
  return answers;
}

/** The same paths with `reveal=1` added: what a read-only token gets when it asks to see more. */
export function withReveal(paths: string[]): string[] {
  return paths.map((path) => `${path}${path.includes('?') ? '&' : '?'}reveal=1`);
}
