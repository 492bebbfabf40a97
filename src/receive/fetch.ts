import { errorAnswer, type Answer } from './answer.js';
import { createBodyBuffer } from './body-buffer.js';
import type { BodyBudget, BodyClaim } from './budget.js';
import type { Intake } from './intake.js';
import { routeKeyOfPath } from './account.js';
import { declaredLength, refusedBody, type BodyReading } from './raw-body.js';

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
  if (body === 'busy') return refusedBody('busy', limit, budget);
  try {
    for await (const chunk of (request.body ?? []) as AsyncIterable<Uint8Array>) {
      const added = body.add(chunk);
      // Leaving the loop cancels the stream: the rest is not read.
      if (added !== 'ok') return refusedBody(added, limit, budget);
    }
    return { ok: true, body: body.bytes() };
  } finally {
    body.discard();
  }
}

/** Reads the body and hands it to the intake; its bytes stay claimed until the intake has answered. */
async function receiveFetched(intake: Intake, request: Request, routeKey: string | undefined): Promise<Answer> {
  const routing = intake.route(routeKey);
  if (!routing.ok) return routing.result.answer;
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
