// Where the API key may go: the service's address the caller gave, over HTTPS (plain HTTP only
// on this machine, or when asked for), and never to another origin a redirect names.
import { isLoopbackHost } from '../loopback.js';

/**
 * `address` for messages, logs and `--print-config`: a user name and password (`https://user:pass@host`)
 * shown as `***`, whether or not the rest parses as a URL.
 */
export function withoutCredentials(address: string): string {
  try {
    const url = new URL(address);
    if (url.username === '' && url.password === '') return address;
    url.username = '***';
    url.password = '';
    return url.href;
  } catch {
    // Unparsable: everything up to the last @ may be credentials (a password can hold / or #).
    return address.replace(/^([a-z][a-z0-9+.-]*:\/\/).*@/is, '$1***@');
  }
}

/**
 * Why `address` cannot be the service's address, or undefined when it can; the text follows the
 * name of the setting (`baseUrl`, `--api-url`), and `optIn` names the way to accept plain http.
 * The key travels in a header with every request: over plain http anyone on the path reads it.
 */
export function serviceUrlProblem(address: string, allowInsecureHttp: boolean, optIn: string): string | undefined {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return 'must be the service address, e.g. https://api.example.com or a sandbox’s url';
  }
  // fetch refuses such a URL anyway; said here without the credentials it would echo.
  if (url.username !== '' || url.password !== '')
    return `must not hold a user name or password (${withoutCredentials(address)}): the service takes the API key alone`;
  if (url.protocol === 'https:') return undefined;
  if (url.protocol !== 'http:') return `must be an https:// address, got ${url.protocol}`;
  if (isLoopbackHost(url.hostname) || allowInsecureHttp) return undefined;
  return `${url.origin} is plain http: the API key would cross the network readable, and the service requires https. Use https://, or on a trusted network opt in with ${optIn}`;
}

/** 301, 302, 303, 307, 308: the answers that name another address in `Location`. */
export const isRedirectStatus = (status: number): boolean =>
  status === 301 || status === 302 || status === 303 || status === 307 || status === 308;

/** Redirects followed within one attempt, at most (browsers follow 20; a service needs one or two). */
export const MAX_REDIRECTS = 5;

export type RedirectDecision = { follow: true; url: string } | { follow: false; target: string; reason: string };

/**
 * Whether to follow a redirect from `from` with the key. Only to the same origin (scheme, host and
 * port): another origin would receive the key, and its answer would pass for the service's. A
 * 301/302/303 turns a request into a GET; that is followed for a GET only, so a POST or PATCH is
 * never silently changed into another request.
 */
export function decideRedirect(from: string, location: string, status: number, method: string, redirectsSoFar: number): RedirectDecision {
  let target: URL;
  try {
    target = new URL(location, from);
  } catch {
    return { follow: false, target: location, reason: 'to an address that is not a URL' };
  }
  target.username = '';
  target.password = '';
  const source = new URL(from);
  const shown = target.href;
  if (source.protocol === 'https:' && target.protocol !== 'https:')
    return { follow: false, target: shown, reason: 'from https to plain http' };
  if (target.origin !== source.origin) return { follow: false, target: shown, reason: `to another origin than ${source.origin}` };
  if (status !== 307 && status !== 308 && method !== 'GET')
    return { follow: false, target: shown, reason: `that would turn the ${method} into a GET` };
  if (redirectsSoFar >= MAX_REDIRECTS) return { follow: false, target: shown, reason: `after ${MAX_REDIRECTS} redirects already` };
  return { follow: true, url: target.href };
}
