import type { IncomingMessage } from 'node:http';
import { BODY_ALREADY_READ_MESSAGE, errorAnswer, type Answer } from './answer.js';
import { createBodyBuffer } from './body-buffer.js';
import type { BodyBudget, BodyClaim, CutReason } from './budget.js';
import { busy, cutOff, tooLarge } from './intake.js';

export type BodyReading = { ok: true; body: Buffer } | { ok: false; outcome: 'refused' | 'busy'; answer: Answer };

const aborted = (): BodyReading => ({
  ok: false,
  outcome: 'refused',
  answer: errorAnswer(400, 'REQUEST_ABORTED', 'The client went away.'),
});

/** The body's announced length, when it announced one Node could read. */
export function declaredLength(header: string | null | undefined): number | undefined {
  if (header === undefined || header === null || !/^\d+$/.test(header)) return undefined;
  return Number(header);
}

/** The 413 (the rest of the body unread, so the connection closes), or the 503 of a full budget. */
export function refusedBody(reason: 'too_large' | 'busy', limit: number, budget: BodyBudget): BodyReading {
  return reason === 'busy'
    ? { ok: false, outcome: 'busy', answer: busy(budget) }
    : { ok: false, outcome: 'refused', answer: { ...tooLarge(limit), headers: { Connection: 'close' } } };
}

/** The answer to a body the budget cut off (it closes the connection): 503 to make room, 408 too slow. */
export function cutBody(reason: CutReason, budget: BodyBudget): BodyReading {
  return { ok: false, outcome: reason === 'evicted' ? 'busy' : 'refused', answer: cutOff(reason, budget) };
}

/**
 * Reads the exact bytes of a request into one buffer, its room taken from the budget through
 * `claim` as they arrive (the caller releases it once the request is answered): refused early on
 * `Content-Length` over the limit (413), and while reading when the body grows past the limit
 * (413) or the budget cannot spare its bytes (503); cut off when the budget needs its room for
 * another client's or it comes too slowly.
 */
export async function readRawBody(req: IncomingMessage, limit: number, budget: BodyBudget, claim: BodyClaim): Promise<BodyReading> {
  if (!req.readable) return { ok: false, outcome: 'refused', answer: errorAnswer(500, 'BODY_ALREADY_READ', BODY_ALREADY_READ_MESSAGE) };
  const declared = declaredLength(req.headers['content-length']);
  if (declared !== undefined && declared > limit) return refusedBody('too_large', limit, budget);
  const body = createBodyBuffer(limit, claim, declared);
  return await new Promise<BodyReading>((resolve) => {
    const finish = (reading: BodyReading) => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      claim.onCut = undefined;
      // What was kept is a copy (or, for a small body, stays referenced by the reading).
      body.discard();
      resolve(reading);
    };
    const onData = (chunk: Buffer) => {
      const added = body.add(chunk);
      if (added === 'ok') return;
      // The rest stays unread: the answer closes the connection.
      req.pause();
      finish(refusedBody(added, limit, budget));
    };
    const onEnd = () => {
      if (declared !== undefined && body.size !== declared) return finish(aborted());
      claim.complete();
      finish({ ok: true, body: body.bytes() });
    };
    const onError = (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNRESET') finish(aborted());
      else
        finish({
          ok: false,
          outcome: 'refused',
          answer: errorAnswer(400, 'INVALID_BODY', 'The request body could not be read.', { reason: error.message }),
        });
    };
    // Closed before its end: the client went away, or the server cut it off (a timeout).
    const onClose = () => finish(aborted());
    claim.onCut = (reason) => {
      req.pause();
      finish(cutBody(reason, budget));
    };
    req.on('data', onData).once('end', onEnd).once('error', onError).once('close', onClose);
  });
}
