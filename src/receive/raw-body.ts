import type { IncomingMessage } from 'node:http';
import getRawBody from 'raw-body';
import { BODY_ALREADY_READ_MESSAGE, errorAnswer, type Answer } from './answer.js';
import { tooLarge } from './intake.js';

export type BodyReading = { ok: true; body: Buffer } | { ok: false; answer: Answer };

/**
 * Reads the exact bytes of a request, refusing early on `Content-Length` and again while
 * reading when the body grows past the limit.
 */
export async function readRawBody(req: IncomingMessage, limit: number): Promise<BodyReading> {
  try {
    const body = await getRawBody(req, { length: req.headers['content-length'], limit });
    return { ok: true, body };
  } catch (error) {
    const type = (error as { type?: string }).type;
    if (type === 'entity.too.large') return { ok: false, answer: { ...tooLarge(limit), headers: { Connection: 'close' } } };
    if (type === 'stream.not.readable') {
      return { ok: false, answer: errorAnswer(500, 'BODY_ALREADY_READ', BODY_ALREADY_READ_MESSAGE) };
    }
    if (type === 'request.aborted') return { ok: false, answer: errorAnswer(400, 'REQUEST_ABORTED', 'The client went away.') };
    return {
      ok: false,
      answer: errorAnswer(400, 'INVALID_BODY', 'The request body could not be read.', {
        reason: (error as Error).message,
      }),
    };
  }
}
