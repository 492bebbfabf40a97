import { errorAnswer, type Answer } from './answer.js';
import { tooLarge, type Intake } from './intake.js';

function toResponse(answer: Answer): Response {
  return new Response(JSON.stringify(answer.body), {
    status: answer.status,
    headers: { ...answer.headers, 'Content-Type': 'application/json; charset=utf-8' },
  });
}

async function readLimited(request: Request, limit: number): Promise<Uint8Array | null> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > limit) return null;
  if (request.body === null) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** A fetch-style handler (`Request` in, `Response` out) for runtimes and frameworks built on it. */
export function fetchHandler(intake: Intake) {
  return async (request: Request): Promise<Response> => {
    if (request.method !== 'POST') {
      return toResponse(errorAnswer(405, 'METHOD_NOT_ALLOWED', 'Webhooks are delivered with POST.', {}, { Allow: 'POST' }));
    }
    // Last resort: the returned promise always resolves with an answer in the service's envelope.
    try {
      const rawBody = await readLimited(request, intake.maxBodyBytes);
      if (rawBody === null) return toResponse(tooLarge(intake.maxBodyBytes));
      const result = await intake.receive({ rawBody, headers: request.headers });
      return toResponse(result.answer);
    } catch (error) {
      return toResponse(intake.unexpected(error, 'fetch').answer);
    }
  };
}
