import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorAnswer, type Answer } from './answer.js';
import type { Intake, IntakeResult } from './intake.js';
import { routeKeyOfPath } from './account.js';
import { readRawBody } from './raw-body.js';
import { peerAddress, type ClientOf } from './client.js';

/**
 * Writes an answer unless one was already written, for the adapters' last-resort guards: an
 * answer that cannot be written (the client is gone) ends the connection instead of throwing.
 */
export function answerOnce(res: ServerResponse, answer: Answer): boolean {
  // A connection Node already answered and closed itself (a request timeout: 408) takes nothing.
  if (res.headersSent || res.writableEnded || res.destroyed || res.socket?.destroyed === true) return false;
  try {
    writeAnswer(res, answer);
    return true;
  } catch {
    res.destroy();
    return false;
  }
}

/** Writes an answer as JSON on a node:http (or Express) response. */
export function writeAnswer(res: ServerResponse, answer: Answer): void {
  const json = JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    ...answer.headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(json),
  });
  res.end(json);
}

/**
 * Reads the request's exact bytes (within the limit and the budget, charged to the client at
 * `client`) and hands them to the intake. The bytes stay claimed from the budget until the intake
 * has answered, however it ends.
 */
export async function receiveRequest(
  intake: Intake,
  req: IncomingMessage,
  routeKey: string | undefined,
  client: string | undefined,
): Promise<IntakeResult> {
  // An unknown path or a disabled account is answered before a byte of the body is held.
  const routing = intake.route(routeKey);
  if (!routing.ok) {
    req.resume();
    return routing.result;
  }
  const claim = intake.budget.claim(client ?? '');
  try {
    const reading = await readRawBody(req, intake.maxBodyBytes, intake.budget, claim);
    return reading.ok
      ? await intake.receive({ rawBody: reading.body, headers: req.headers, routeKey })
      : { outcome: reading.outcome, answer: reading.answer };
  } finally {
    claim.release();
  }
}

/** Called after each request is answered, with what the intake did, the request, and when it started (`process.hrtime.bigint()`). */
export type ResultListener = (result: IntakeResult, req: IncomingMessage, startedAt: bigint) => void;

/** Tells the listener; a listener that throws is logged, never allowed to reject the request handler. */
export function tellListener(
  intake: Intake,
  onResult: ResultListener | undefined,
  result: IntakeResult,
  req: IncomingMessage,
  startedAt: bigint,
): void {
  try {
    onResult?.(result, req, startedAt);
  } catch (error) {
    intake.unexpected(error, 'onRequest listener');
  }
}

/** Where an adapter finds a request's route key; the default reads a path ending `/webhooks/<route key>`. */
export type RouteKeyOf = (req: IncomingMessage) => string | undefined;

const routeKeyOfUrl: RouteKeyOf = (req) => routeKeyOfPath(req.url);

/**
 * A node:http request listener for the intake: no framework between the socket and the inbox.
 * Answers 405 to anything but POST. A path ending `/webhooks/<route key>` goes to that account.
 * A body's bytes are charged to the client `clientOf` names (by default the peer's address).
 */
export function nodeHandler(
  intake: Intake,
  onResult?: ResultListener,
  routeKeyOf: RouteKeyOf = routeKeyOfUrl,
  clientOf: ClientOf = peerAddress,
) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const startedAt = process.hrtime.bigint();
    let result: IntakeResult;
    // Last resort: whatever throws, the request gets an answer and the returned promise never
    // rejects (an unhandled rejection would end the process).
    try {
      if (req.method !== 'POST') {
        result = {
          outcome: 'refused',
          answer: errorAnswer(405, 'METHOD_NOT_ALLOWED', 'Webhooks are delivered with POST.', {}, { Allow: 'POST' }),
        };
      } else {
        result = await receiveRequest(intake, req, routeKeyOf(req), clientOf(req));
      }
    } catch (error) {
      result = intake.unexpected(error, 'node:http');
    }
    // The access log tells what the client got: an answer Node could not send is not logged
    // here (Node's own answer, such as a 408, is logged where it is sent).
    if (answerOnce(res, result.answer)) tellListener(intake, onResult, result, req, startedAt);
  };
}
