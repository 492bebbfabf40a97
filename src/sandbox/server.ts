// node:http in front of the routes: authentication, rate limit, body limit and JSON, then the
// route; every refusal in the service's envelope, and no exception ever ends the process.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { API_PREFIX, LIMITS } from '../api/index.js';
import { authenticate, type createRateLimiter } from './auth.js';
import type { SandboxContext } from './context.js';
import { errorReply, type Reply } from './errors.js';
import { matchApiRoute } from './routes.js';
import type { Agency } from './state.js';

/** The sandbox's own routes, outside /api/v1 and without a key. */
type SandboxRoutes = Record<string, (body: unknown, query: Record<string, string | string[]>) => Reply>;

export interface ServerOptions {
  agencies: ReadonlyMap<string, Agency>;
  context: SandboxContext;
  limiter: ReturnType<typeof createRateLimiter>;
  sandboxRoutes: SandboxRoutes;
  log: (line: string) => void;
}

type Body = { ok: true; text: string } | { ok: false; reply: Reply };

function readBody(request: IncomingMessage, limit: number): Promise<Body> {
  const tooLarge = (): Body => ({
    ok: false,
    reply: errorReply('REQUEST_TOO_LARGE', { max_bytes: limit }, undefined, { connection: 'close' }),
  });
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve(tooLarge());
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.off('data', onData);
        request.resume();
        resolve(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    request.on('data', onData);
    request.once('end', () => resolve({ ok: true, text: Buffer.concat(chunks).toString('utf8') }));
    request.once('error', () =>
      resolve({ ok: false, reply: errorReply('VALIDATION_ERROR', { body: 'the request body could not be read' }) }),
    );
  });
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; reply: Reply } {
  if (text.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, reply: errorReply('VALIDATION_ERROR', { body: `not valid JSON: ${(error as Error).message}` }) };
  }
}

function queryOf(url: URL): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    query[key] = values.length === 1 ? values[0]! : values;
  }
  return query;
}

function send(response: ServerResponse, reply: Reply): void {
  if (response.headersSent) return;
  const body = JSON.stringify(reply.body);
  response.writeHead(reply.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...reply.headers,
  });
  response.end(body);
}

export function createSandboxServer(options: ServerOptions): Server {
  async function answer(request: IncomingMessage, url: URL): Promise<Reply> {
    const method = request.method ?? 'GET';
    const path = url.pathname;
    const withBody = method === 'POST' || method === 'PATCH' || method === 'PUT';

    if (path.startsWith('/sandbox/')) {
      const route = options.sandboxRoutes[`${method} ${path}`];
      if (route === undefined) return errorReply('RESOURCE_NOT_FOUND', { method, path });
      const body = withBody ? await readBody(request, LIMITS.maxBodyBytes) : { ok: true as const, text: '' };
      if (!body.ok) return body.reply;
      const json = parseJson(body.text);
      return json.ok ? route(json.value, queryOf(url)) : json.reply;
    }
    if (path !== API_PREFIX && !path.startsWith(`${API_PREFIX}/`)) return errorReply('RESOURCE_NOT_FOUND', { method, path });

    const header = request.headers['x-api-key'];
    const auth = authenticate(header, options.agencies);
    if (!auth.ok) return auth.reply;
    const admitted = options.limiter.admit(auth.agency.apiKey);
    if (!admitted.ok) return admitted.reply;
    const match = matchApiRoute(method, path);
    if (!match.found) return errorReply('RESOURCE_NOT_FOUND', { method, path });
    const body = withBody ? await readBody(request, LIMITS.maxBodyBytes) : { ok: true as const, text: '' };
    if (!body.ok) return body.reply;
    const json = parseJson(body.text);
    if (!json.ok) return json.reply;
    return match.route({ agency: auth.agency, params: match.params, query: queryOf(url), body: json.value }, options.context);
  }

  return createServer((request, response) => {
    let url: URL;
    try {
      url = new URL(request.url ?? '/', 'http://sandbox.invalid');
    } catch {
      send(response, errorReply('RESOURCE_NOT_FOUND'));
      return;
    }
    answer(request, url)
      .catch((error: unknown) => {
        // The type and first frame only: a message could hold request data.
        options.log(
          `prequal-hooks sandbox: unexpected ${(error as Error)?.name ?? typeof error} answering ${request.method} ${url.pathname}: ${String((error as Error)?.stack?.split('\n')[1] ?? '').trim()}\n`,
        );
        return errorReply('INTERNAL_ERROR');
      })
      .then((reply) => {
        send(response, reply);
        // What the route did not read is drained, so that the connection can serve the next request.
        if (!request.complete) request.resume();
      })
      .catch(() => response.destroy());
  });
}
