import { errorAnswer, type Answer } from './answer.js';
import { createBodyBuffer } from './body-buffer.js';
import type { BodyBudget, BodyClaim, CutReason } from './budget.js';
import type { Intake } from './intake.js';
import { routeKeyOfPath } from './account.js';
import { cutBody, declaredLength, refusedBody, type BodyReading } from './raw-body.js';

function toResponse(answer: Answer): Response {
  // Connection is hop-by-hop: the runtime owns the connection (and HTTP/2 forbids the header).
  const { Connection: _connection, ...headers } = answer.headers;
  return new Response(JSON.stringify(answer.body), {
    status: answer.status,
    headers: { ...headers, 'Content-Type': 'application/json; charset=utf-8' },
  });
}

/** Reads the body into one buffer, its room claimed from the budget as `readRawBody` does. */
async function readLimited(request: Request, limit: number, budget: BodyBudget, claim: BodyClaim): Promise<BodyReading> {
  const declared = declaredLength(request.headers.get('content-length'));
  if (declared !== undefined && declared > limit) return refusedBody('too_large', limit, budget);
  const body = createBodyBuffer(limit, claim, declared);
  const reader = (request.body as ReadableStream<Uint8Array> | null)?.getReader();
  let cut: CutReason | undefined;
  // Cancelling the stream ends a read that waits for bytes that may never come.
  claim.onCut = (reason) => {
    cut = reason;
    reader?.cancel().catch(() => undefined);
  };
  try {
    for (;;) {
      const chunk = reader === undefined ? { done: true as const } : await reader.read();
      if (cut !== undefined) return cutBody(cut, budget);
      if (chunk.done) break;
      const added = body.add(chunk.value);
      if (added !== 'ok') {
        // The rest is not read.
        await reader?.cancel().catch(() => undefined);
        return refusedBody(added, limit, budget);
      }
    }
    claim.complete();
    return { ok: true, body: body.bytes() };
  } finally {
    claim.onCut = undefined;
    body.discard();
  }
}

/** Reads the body and hands it to the intake; its bytes stay claimed until the intake has answered. */
async function receiveFetched(intake: Intake, request: Request, routeKey: string | undefined): Promise<Answer> {
  const routing = intake.route(routeKey);
  if (!routing.ok) return routing.result.answer;
  // A fetch Request names no client: every body is charged to one address, so shares never apply.
  const claim = intake.budget.claim();
  try {
    const reading = await readLimited(request, intake.maxBodyBytes, intake.budget, claim);
    return reading.ok ? (await intake.receive({ rawBody: reading.body, headers: request.headers, routeKey })).answer : reading.answer;
  } finally {
    claim.release();
  }
}

/**
 * A fetch-style handler (`Request` in, `Response` out) for runtimes and frameworks built on it. A
 * URL whose path ends `/webhooks/<route key>` goes to that account, unless `routeKeyOf` says otherwise.
 */
export function fetchHandler(
  intake: Intake,
  routeKeyOf: (request: Request) => string | undefined = (r) => routeKeyOfPath(new URL(r.url).pathname),
) {
  return async (request: Request): Promise<Response> => {
    if (request.method !== 'POST') {
      return toResponse(errorAnswer(405, 'METHOD_NOT_ALLOWED', 'Webhooks are delivered with POST.', {}, { Allow: 'POST' }));
    }
    // Last resort: the returned promise always resolves with an answer in the service's envelope.
    try {
      return toResponse(await receiveFetched(intake, request, routeKeyOf(request)));
    } catch (error) {
      return toResponse(intake.unexpected(error, 'fetch').answer);
    }
  };
}
