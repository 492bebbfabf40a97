// Whether a request stays on this machine: where a secret may go over plain HTTP (the client's
// API key, an OAuth2 client secret of a destination).

/**
 * `localhost`, `*.localhost`, 127.0.0.0/8, ::1 and ::ffff:127.x.x.x, as `URL` writes them: a
 * request to them never leaves the machine.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    /^127(?:\.\d{1,3}){3}$/.test(host) ||
    host === '[::1]' ||
    /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(host)
  );
}
