// A destination's URL as it may be shown: its credentials never are.

/** A query's part as shown: its name kept, its value masked; a part without `=` may be a token, masked whole. */
function maskedParameter(part: string): string {
  if (part === '') return part;
  const equals = part.indexOf('=');
  return equals === -1 ? '***' : `${part.slice(0, equals + 1)}***`;
}

/**
 * A destination's URL as stored in clear and shown (`list`, the console, logs, errors):
 * `https://***@host/path?key=***&mode=***#***`, never the user info, a query's values nor the
 * fragment (any may hold a credential), the query's names kept. The whole URL is sealed
 * (src/destinations/registry.ts). Masking a masked URL changes nothing; migrations
 * `sqlite/022_destination_urls_masked.sql` and `postgres/021_destination_urls_masked.sql` mask the
 * rows written before, the same way.
 */
export function maskedUrl(address: string): string {
  try {
    const url = new URL(address);
    const userInfo = url.username === '' && url.password === '' ? '' : '***@';
    const query = url.search === '' ? '' : `?${url.search.slice(1).split('&').map(maskedParameter).join('&')}`;
    return `${url.protocol}//${userInfo}${url.host}${url.pathname}${query}${url.hash === '' ? '' : '#***'}`;
  } catch {
    // Unparsable: everything up to the last @ may be credentials, everything after ? or # too.
    return address.replace(/^([a-z][a-z0-9+.-]*:\/\/).*@/is, '$1***@').replace(/([?#]).*$/s, '$1***');
  }
}
