// OAuth2 client credentials (RFC 6749 §4.4) for an http(s):// destination: a token fetched from the
// token endpoint, the client authenticated by HTTP Basic (§2.3.1), sent as `Authorization: Bearer`,
// kept until shortly before it expires (half its life, a minute at most, before) and fetched again
// then, or once when the destination answers 401. The endpoint is reached as destinations are
// (the network policy, no redirect, 15 s). A failure says what the endpoint answered (its status
// and its OAuth2 `error` code), never the secret, the token or the rest of the body.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { OAuth2Client } from './authentication.js';
import { DeniedAddressError, type NetworkPolicy } from './network-policy.js';

/** The token endpoint did not give a token: the delivery fails with this reason. */
export class TokenEndpointError extends Error {
  override readonly name = 'TokenEndpointError';
}

const MAX_ANSWER_BYTES = 64 * 1024;

interface Token {
  value: string;
  /** When it is fetched again (ms): before it expires; Infinity when the endpoint said no lifetime. */
  renewAt: number;
}

/** The tokens of one destination's client, fetched at need, one fetch at a time. */
export interface TokenCache {
  /** A token to send; `fresh`: not the one last given (the destination answered 401 with it). */
  token(client: OAuth2Client, fresh: boolean, options: { timeoutMs: number; signal: AbortSignal }): Promise<string>;
}

function answerOf(url: URL, client: OAuth2Client, policy: NetworkPolicy, options: { timeoutMs: number; signal: AbortSignal }) {
  const form = new URLSearchParams({ grant_type: 'client_credentials', ...(client.scope !== undefined && { scope: client.scope }) });
  const basic = `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`;
  const body = form.toString();
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const sending = send(
      url,
      {
        method: 'POST',
        lookup: policy.lookup,
        signal: AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]),
        headers: {
          authorization: `Basic ${Buffer.from(basic, 'utf8').toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
          accept: 'application/json',
          'user-agent': 'prequal-hooks destinations',
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read <= MAX_ANSWER_BYTES) chunks.push(chunk);
          else sending.destroy();
        });
        const done = () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
        response.on('end', done);
        response.on('close', done);
      },
    );
    sending.on('error', reject);
    sending.end(body);
  });
}

/** The OAuth2 `error` code of an answer, if it is one (a short token of the RFC's alphabet, never free text). */
function errorCode(text: string): string | undefined {
  try {
    const code = (JSON.parse(text) as { error?: unknown }).error;
    return typeof code === 'string' && /^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(code) ? code : undefined;
  } catch {
    return undefined;
  }
}

async function fetchToken(
  client: OAuth2Client,
  policy: NetworkPolicy,
  now: () => number,
  options: { timeoutMs: number; signal: AbortSignal },
): Promise<Token> {
  const url = new URL(client.tokenUrl);
  const refused = policy.hostRefusal(url.hostname);
  if (refused !== undefined) throw new TokenEndpointError(`the OAuth2 token endpoint: ${new DeniedAddressError(refused).message}`);
  let answer;
  try {
    answer = await answerOf(url, client, policy, options);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const why = error instanceof DeniedAddressError ? error.message : typeof code === 'string' ? code : 'the request failed';
    throw new TokenEndpointError(`the OAuth2 token endpoint could not be reached: ${why}`);
  }
  const at = now();
  if (answer.status !== 200) {
    const code = errorCode(answer.text);
    throw new TokenEndpointError(`the OAuth2 token endpoint answered ${answer.status}${code === undefined ? '' : ` (${code})`}`);
  }
  let parsed: { access_token?: unknown; token_type?: unknown; expires_in?: unknown };
  try {
    parsed = JSON.parse(answer.text) as typeof parsed;
  } catch {
    throw new TokenEndpointError('the OAuth2 token endpoint answered 200 without JSON');
  }
  if (typeof parsed.access_token !== 'string' || parsed.access_token === '' || /[\r\n]/.test(parsed.access_token))
    throw new TokenEndpointError('the OAuth2 token endpoint answered 200 without an access_token');
  if (typeof parsed.token_type !== 'string' || parsed.token_type.toLowerCase() !== 'bearer')
    throw new TokenEndpointError('the OAuth2 token endpoint gave a token that is not a Bearer token');
  const life = typeof parsed.expires_in === 'number' && parsed.expires_in > 0 ? parsed.expires_in * 1000 : undefined;
  return { value: parsed.access_token, renewAt: life === undefined ? Infinity : at + life - Math.min(life / 2, 60_000) };
}

export function tokenCache(policy: NetworkPolicy, now: () => number = Date.now): TokenCache {
  let held: { key: string; token: Promise<Token> } | undefined;
  return {
    async token(client, fresh, options) {
      const key = JSON.stringify([client.tokenUrl, client.clientId, client.clientSecret, client.scope]);
      const seen = held?.key === key ? held.token : undefined;
      const current = seen === undefined ? undefined : await seen.catch(() => undefined);
      if (current !== undefined && !fresh && now() < current.renewAt) return current.value;
      // One fetch for the requests that want one now (another may have started it meanwhile); a failed one is not kept.
      if (held?.token === seen) {
        const token = fetchToken(client, policy, now, options);
        held = { key, token };
        token.catch(() => {
          if (held?.token === token) held = undefined;
        });
      }
      return (await held!.token).value;
    },
  };
}
