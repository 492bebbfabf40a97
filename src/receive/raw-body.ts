import type { IncomingMessage } from 'node:http';
import { BODY_ALREADY_READ_MESSAGE, errorAnswer, type Answer } from './answer.js';
import { createBodyBuffer } from './body-buffer.js';
import type { BodyBudget, BodyClaim, CutReason } from './budget.js';
import { busy, cutOff, fragmented, tooLarge } from './intake.js';

export type BodyReading = { ok: true; body: Buffer } | { ok: false; outcome: 'refused' | 'busy'; answer: Answer };

/** The answer to a request whose client went away (it is not sent: for the logs and the metrics). */
export const clientGone = (): Answer => errorAnswer(400, 'REQUEST_ABORTED', 'The client went away.');

const aborted = (): BodyReading => ({ ok: false, outcome: 'refused', answer: clientGone() });

/** The body's announced length, when it announced one Node could read. */
export function declaredLength(header: string | null | undefined): number | undefined {
  if (header === undefined || header === null || !/^\d+$/.test(header)) return undefined;
  return Number(header);
}

/**
 * The 413, or the 400 of a body in too many pieces (the rest of the body unread, so the connection
 * closes), or the 503 of a full budget.
 */
export function refusedBody(reason: 'too_large' | 'busy' | 'fragmented', limit: number, budget: BodyBudget): BodyReading {
  if (reason === 'busy') return { ok: false, outcome: 'busy', answer: busy(budget) };
  return { ok: false, outcome: 'refused', answer: reason === 'fragmented' ? fragmented() : tooLarge(limit) };
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
      skipRestOfBody(req);
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

/** Node's HTTP parser as a socket holds it: its callbacks are slots at the indexes its class names. */
type ParserSlots = Record<number, unknown> & { constructor: { kOnBody?: unknown } };

/**
 * Stops what is left of a refused body from costing a call into JavaScript a piece. Node's parser
 * goes on through what it has read (64 KiB at a time: ten thousand one-byte chunks), copying each
 * piece and pushing it into a stream nobody reads, about 40 ms of CPU for one read against 1.5 ms
 * without. Its body callback is set aside until the connection closes, then put back: the parser
 * serves another connection next. Where Node holds its parser otherwise, nothing is changed.
 */
function skipRestOfBody(req: IncomingMessage): void {
  const socket = req.socket as (typeof req.socket & { parser?: ParserSlots | null }) | null;
  const parser = socket?.parser;
  const slot = parser?.constructor.kOnBody;
  if (socket == null || parser == null || typeof slot !== 'number' || typeof parser[slot] !== 'function') return;
  const onBody = parser[slot];
  parser[slot] = undefined;
  socket.once('close', () => {
    parser[slot] = onBody;
  });
}
