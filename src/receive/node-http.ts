import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorAnswer, type Answer } from './answer.js';
import { tooManyFailures, type Intake, type IntakeResult } from './intake.js';
import { routeKeyOfPath } from './account.js';
import { clientGone, readRawBody } from './raw-body.js';
import { peerAddress, type ClientOf } from './client.js';
import type { Refusal, Turn, TurnEnd } from './admission.js';

/** The last request taken on each connection: a connection's requests are read and answered one at a time. */
const connectionTurns = new WeakMap<object, Promise<void>>();
/** Connections whose last answer closes them: what was pipelined behind it is dropped unread. */
const closing = new WeakSet<object>();

/**
 * Waits until the requests before this one on its connection (pipelined behind each other) are
 * answered. Resolves with the function that ends this request's turn, or undefined when an answer
 * before it closes the connection: then it is dropped, unread and unanswered, so that a flood of
 * pipelined bad requests costs its sender a connection for each one verified.
 */
export async function connectionTurn(req: IncomingMessage): Promise<(() => void) | undefined> {
  const socket = req.socket;
  const before = connectionTurns.get(socket);
  let end!: () => void;
  const mine = new Promise<void>((resolve) => (end = resolve));
  connectionTurns.set(socket, mine);
  const release = () => {
    end();
    if (connectionTurns.get(socket) === mine) connectionTurns.delete(socket);
  };
  if (before !== undefined) await before;
  // Node may emit a pipelined request only once the answer before it is out: the mark outlives the turns.
  if (closing.has(socket) || socket.destroyed) {
    release();
    return undefined;
  }
  return release;
}

/**
 * The answer as sent: a request refused before or by verification closes its connection (what
 * was pipelined behind it is not read), so a flood of bad requests costs the flooder a connection each.
 */
export function finalAnswer(result: IntakeResult): Answer {
  const { answer } = result;
  if (result.outcome !== 'refused' || answer.headers['Connection'] === 'close') return answer;
  return { ...answer, headers: { ...answer.headers, Connection: 'close' } };
}

/**
 * Writes an answer unless one was already written, for the adapters' last-resort guards: an
 * answer that cannot be written (the client is gone) ends the connection instead of throwing.
 */
export function answerOnce(res: ServerResponse, answer: Answer): boolean {
  // A connection Node already answered and closed itself (a request timeout: 408) takes nothing.
  if (res.headersSent || res.writableEnded || res.destroyed || res.socket?.destroyed === true) return false;
  try {
    writeAnswer(res, answer);
    if (answer.headers['Connection'] === 'close' && res.socket !== null) {
      // Nothing more is read from it: Node closes it once the answer is out.
      closing.add(res.socket);
      res.socket.pause();
    }
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
  const address = client ?? '';
  // An unknown path or a disabled account is answered before a byte of the body is held.
  const routing = intake.route(routeKey);
  if (!routing.ok) {
    if (routing.result.outcome === 'refused') intake.admission.failed(address);
    return routing.result;
  }
  const turn = await turnOf(intake, req, address);
  if (turn === undefined) return { outcome: 'refused', answer: clientGone() };
  if (!turn.ok) return { outcome: 'refused', answer: tooManyFailures(turn.retryAfterSeconds) };
  let result: IntakeResult | undefined;
  const claim = intake.budget.claim(address);
  try {
    const reading = await readRawBody(req, intake.maxBodyBytes, intake.budget, claim);
    result = reading.ok
      ? await intake.receive({ rawBody: reading.body, headers: req.headers, routeKey })
      : { outcome: reading.outcome, answer: reading.answer };
    return result;
  } finally {
    claim.release();
    turn.leave(result === undefined ? 'other' : turnEnd(result));
  }
}

/**
 * What a request's end does to its address's budget: refused before or by verification (a 4xx,
 * not a client that went away) is a failure; past verification (stored, a duplicate, kept as a
 * dead letter, or 503 with the database down) earns one back.
 */
function turnEnd(result: IntakeResult): TurnEnd {
  if (result.outcome === 'refused') {
    const aborted = (result.answer.body as { error?: { code?: unknown } }).error?.code === 'REQUEST_ABORTED';
    return result.answer.status >= 400 && result.answer.status < 500 && !aborted ? 'failed' : 'other';
  }
  return result.outcome === 'busy' || result.outcome === 'failed' ? 'other' : 'verified';
}

/**
 * The request's turn to be read and verified (admission.ts): at once, after a wait (its body
 * unread meanwhile), or refused; undefined when its client went away while it waited.
 */
async function turnOf(intake: Intake, req: IncomingMessage, address: string): Promise<Turn | Refusal | undefined> {
  const entry = intake.admission.enter(address);
  if ('turn' in entry) {
    const gone = () => entry.cancel();
    req.once('close', gone);
    try {
      return await entry.turn;
    } finally {
      req.off('close', gone);
    }
  }
  return entry;
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
    const endTurn = await connectionTurn(req);
    if (endTurn === undefined) return;
    let result: IntakeResult;
    // Last resort: whatever throws, the request gets an answer and the returned promise never
    // rejects (an unhandled rejection would end the process).
    try {
      if (req.method !== 'POST') {
        intake.admission.failed(clientOf(req) ?? '');
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
    if (answerOnce(res, finalAnswer(result))) tellListener(intake, onResult, result, req, startedAt);
    endTurn();
  };
}
