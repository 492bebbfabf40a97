// The answers of a request that is not served, in the service's envelope: its token does not open
// what it asks for (the same words for /metrics, the console and the feed), or the receiver is
// starting or stopping.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorAnswer } from '../receive/answer.js';
import { writeAnswer } from '../receive/node-http.js';

const UNAUTHORIZED_HELP = 'HTTP Basic (any user name, the token as password) or Authorization: Bearer <token>.';

/** No token of ours: 401, saying which tokens open this part and how to send one. */
export function unauthorized(res: ServerResponse, needs: string): void {
  writeAnswer(
    res,
    errorAnswer(
      401,
      'UNAUTHORIZED',
      `This needs ${needs}: ${UNAUTHORIZED_HELP}`,
      {},
      { 'WWW-Authenticate': 'Basic realm="prequal-hooks"' },
    ),
  );
}

/** A token of ours that does not open this part: 403, saying what it opens. */
export function forbidden(req: IncomingMessage, res: ServerResponse, message: string): void {
  req.resume();
  writeAnswer(res, errorAnswer(403, 'FORBIDDEN', message, {}));
}

/** The receiver is not open yet: 503, to retry at once. */
export function starting(req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  writeAnswer(res, errorAnswer(503, 'STARTING', 'The receiver is starting; retry.', {}, { 'Retry-After': '1' }));
}

/** The receiver is stopping: 503, and the connection closed. */
export function shuttingDown(res: ServerResponse): void {
  writeAnswer(
    res,
    errorAnswer(503, 'SHUTTING_DOWN', 'The receiver is shutting down; retry.', {}, { 'Retry-After': '5', Connection: 'close' }),
  );
}
