// How a destination proves who is calling, beside its URL (docs/destinations.md, "Authentication"):
// headers of the operator's on every POST, an OAuth2 client's credentials, a client certificate
// (mutual TLS), and the signatures it carries. All of it is sealed with the URL under the accounts
// key (registry.ts); what may be shown (`DestinationAuth`: header names, the OAuth2 client and its
// token URL, the certificate's subject and fingerprint) is kept in clear beside it, so that `list`
// and the console show it without the key, and never a value, a secret or a key.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { DestinationRequestError } from './errors.js';
import { maskedUrl } from './masked-url.js';
import { isLoopbackHost } from '../loopback.js';

/** An OAuth2 client (RFC 6749 §4.4, client credentials), as sealed. */
export interface OAuth2Client {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
}

/** A client certificate and its key (PEM), and the authorities trusted instead of the system's. */
export interface ClientTls {
  cert?: string;
  key?: string;
  ca?: string;
}

/** A destination's authentication as shown (`list`, the console): never a secret, a header's value or a key. */
export interface DestinationAuth {
  /** Standard Webhooks signatures each request carries: `v1` (HMAC-SHA256), `v1a` (Ed25519); none for Redis and NATS. */
  signatures: Array<'v1' | 'v1a'>;
  /** The URL holds a user name and password (sent as Basic authorization to an http(s):// one). */
  userInfo: boolean;
  /** The names of the headers of `--header`, as given. */
  headers: string[];
  oauth2: { tokenUrl: string; clientId: string; scope: string | null } | null;
  /** The client certificate presented (mutual TLS). */
  clientCertificate: { subject: string; fingerprint256: string; validTo: string } | null;
  /** Whether it trusts its own authorities (`--ca`) instead of the system's. */
  ca: boolean;
}

// Hop-by-hop headers (RFC 9110 §7.6.1), the framing the request sets itself, and the signature's:
// a header of the operator's never replaces one of them.
const REFUSED = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'content-type',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
]);

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * `Name: value` as a header to send on every POST: a token for its name, no line break nor NUL in
 * its value, and not a hop-by-hop, framing or signature header. The error never holds the value.
 */
export function parseHeader(text: string): [string, string] {
  const colon = text.indexOf(':');
  const name = colon === -1 ? text.trim() : text.slice(0, colon).trim();
  if (colon === -1 || !TOKEN.test(name))
    throw new DestinationRequestError(
      `--header must be "Name: value" with a header name (letters, digits, -), got a header named "${name.slice(0, 40)}"`,
    );
  const value = text.slice(colon + 1).trim();
  if (/[\r\n\0]/.test(value)) throw new DestinationRequestError(`--header ${name}: its value holds a line break or a NUL`);
  if (REFUSED.has(name.toLowerCase()))
    throw new DestinationRequestError(
      `--header ${name} is refused: hop-by-hop, framing (Host, Content-Length, Content-Type) and signature (webhook-*) headers are the request's own`,
    );
  return [name, value];
}

/** Refuses two headers of one name, and an Authorization header beside OAuth2 or the URL's user info (which send their own). */
export function checkHeaders(headers: ReadonlyArray<[string, string]>, others: { oauth2: boolean; userInfo: boolean }): void {
  const seen = new Set<string>();
  for (const [name] of headers) {
    const lower = name.toLowerCase();
    if (seen.has(lower)) throw new DestinationRequestError(`--header ${name} is given twice`);
    seen.add(lower);
    if (lower === 'authorization' && (others.oauth2 || others.userInfo))
      throw new DestinationRequestError(
        '--header Authorization goes without --oauth2-token-url and without a user name in the URL: each sends its own',
      );
  }
}

/** An OAuth2 client checked: an https:// token URL (http:// to loopback), a client id and secret. */
export function checkOAuth2(client: OAuth2Client): OAuth2Client {
  let url: URL;
  try {
    url = new URL(client.tokenUrl);
  } catch {
    throw new DestinationRequestError(`--oauth2-token-url must be an absolute https:// URL, got "${maskedUrl(client.tokenUrl)}"`);
  }
  // The client secret crosses to the token endpoint: over TLS (RFC 6749 section 3.2), or to this
  // machine's loopback (a token proxy beside the receiver, a test's endpoint).
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname)))
    throw new DestinationRequestError(
      `--oauth2-token-url must be https:// (http:// only to a loopback address), got "${maskedUrl(client.tokenUrl)}"`,
    );
  if (client.clientId === '') throw new DestinationRequestError('--oauth2-client-id must not be empty');
  if (client.clientSecret === '') throw new DestinationRequestError('--oauth2-client-secret-file holds no secret');
  return { ...client, tokenUrl: url.href };
}

/** A certificate of `--client-cert`, or undefined with a clear error when it is not one. */
function certificateOf(pem: string): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch {
    throw new DestinationRequestError('--client-cert is not a PEM certificate');
  }
}

/**
 * A client certificate and its key (PEM) checked: both, the key a private key, and the key the
 * certificate's (a clear error when it is not); `--ca` PEM certificates.
 */
export function checkClientTls(tls: ClientTls): ClientTls {
  if ((tls.cert === undefined) !== (tls.key === undefined))
    throw new DestinationRequestError('--client-cert and --client-key go together: the certificate and its private key');
  if (tls.cert !== undefined) {
    const certificate = certificateOf(tls.cert);
    let key;
    try {
      key = createPrivateKey(tls.key!);
    } catch {
      throw new DestinationRequestError('--client-key is not a PEM private key (an encrypted key is not taken: give it decrypted)');
    }
    if (!certificate.checkPrivateKey(key))
      throw new DestinationRequestError(
        `--client-key does not match --client-cert: the key is not the one of the certificate ${certificate.subject.replace(/\n/g, ', ')} (fingerprint ${certificate.fingerprint256})`,
      );
  }
  if (tls.ca !== undefined) {
    try {
      new X509Certificate(tls.ca);
    } catch {
      throw new DestinationRequestError('--ca is not a PEM certificate');
    }
  }
  return tls;
}

/** What of the certificate may be shown. */
function certificateShown(pem: string): NonNullable<DestinationAuth['clientCertificate']> {
  const certificate = certificateOf(pem);
  return {
    subject: certificate.subject.replace(/\n/g, ', '),
    fingerprint256: certificate.fingerprint256,
    validTo: new Date(certificate.validTo).toISOString(),
  };
}

/** The shown authentication of what is sealed. */
export function authOf(sealed: {
  url: string;
  secrets: ReadonlyArray<{ secret: string }>;
  headers?: ReadonlyArray<[string, string]>;
  oauth2?: OAuth2Client;
  tls?: ClientTls;
}): DestinationAuth {
  const url = new URL(sealed.url);
  const signatures = new Set<'v1' | 'v1a'>(sealed.secrets.map((s) => (s.secret.startsWith('whsk_') ? 'v1a' : 'v1')));
  return {
    signatures: [...signatures].sort(),
    userInfo: url.username !== '' || url.password !== '',
    headers: (sealed.headers ?? []).map(([name]) => name),
    oauth2:
      sealed.oauth2 === undefined
        ? null
        : { tokenUrl: maskedUrl(sealed.oauth2.tokenUrl), clientId: sealed.oauth2.clientId, scope: sealed.oauth2.scope ?? null },
    clientCertificate: sealed.tls?.cert === undefined ? null : certificateShown(sealed.tls.cert),
    ca: sealed.tls?.ca !== undefined,
  };
}

/** The shown authentication of a row written before it was kept (null): signed with v1 when http(s), its user info from the shown URL. */
export function storedAuth(url: string, auth: string | null): DestinationAuth {
  if (auth !== null) return JSON.parse(auth) as DestinationAuth;
  const http = /^https?:/i.test(url);
  return {
    signatures: http ? ['v1'] : [],
    userInfo: /^[a-z]+:\/\/\*\*\*@/i.test(url),
    headers: [],
    oauth2: null,
    clientCertificate: null,
    ca: false,
  };
}

/** One line for a table or a page: `v1a · basic · headers X-Api-Key · oauth2 crm@https://auth/… · client cert CN=… (until …)`. */
export function describeAuth(auth: DestinationAuth): string {
  const parts: string[] = [];
  if (auth.signatures.length > 0) parts.push(`signed ${auth.signatures.join('+')}`);
  if (auth.userInfo) parts.push('user info');
  if (auth.headers.length > 0) parts.push(`headers ${auth.headers.join(', ')}`);
  if (auth.oauth2 !== null) parts.push(`oauth2 ${auth.oauth2.clientId} at ${auth.oauth2.tokenUrl}`);
  if (auth.clientCertificate !== null)
    parts.push(`client cert ${auth.clientCertificate.subject} (until ${auth.clientCertificate.validTo.slice(0, 10)})`);
  if (auth.ca) parts.push('own CA');
  return parts.length === 0 ? 'none' : parts.join(' · ');
}
