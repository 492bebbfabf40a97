import type { Request, RequestHandler, Response } from 'express';
import { BODY_ALREADY_READ_MESSAGE, errorAnswer } from './answer.js';
import type { Intake, IntakeResult } from './intake.js';
import { answerOnce, connectionTurn, finalAnswer, receiveRequest, tellListener, type ResultListener } from './node-http.js';

/** The route parameter that names an account: `app.post('/webhooks/:routeKey', receiver.middleware())`. */
function routeKeyParameter(req: Request): string | undefined {
  const params = req.params as Record<string, unknown> | undefined;
  const key = params?.['routeKey'];
  return typeof key === 'string' ? key : undefined;
}

/**
 * Express middleware: `app.post('/webhooks', receiver.middleware())` for the default account, and
 * `app.post('/webhooks/:routeKey', receiver.middleware())` for the others (docs/accounts.md). Reads the raw body itself,
 * so it works whether or not the app uses `express.json()` elsewhere. When a body parser ran
 * before it on this route, it answers 500 with how to mount it: it never verifies a re-serialised
 * body and never hangs on a consumed stream. A body kept as bytes by `express.raw()` is used as is.
 */
export function expressMiddleware(intake: Intake, onResult?: ResultListener): RequestHandler {
  return async (req: Request, res: Response): Promise<void> => {
    const startedAt = process.hrtime.bigint();
    // Pipelined requests one at a time: one refused closes the connection, and those behind it are dropped.
    const endTurn = await connectionTurn(req);
    if (endTurn === undefined) return;
    let result: IntakeResult;
    // Last resort: an exception is answered here, in the service's envelope, rather than passed
    // to Express's default handler (an HTML page with a stack trace).
    try {
      const parsed: unknown = req.body;
      const routeKey = routeKeyParameter(req);
      if (Buffer.isBuffer(parsed)) {
        result = await intake.receive({ rawBody: parsed, headers: req.headers, routeKey });
      } else if (parsed !== undefined || req.readableEnded) {
        result = { outcome: 'refused', answer: errorAnswer(500, 'BODY_ALREADY_READ', BODY_ALREADY_READ_MESSAGE) };
      } else {
        // Express's req.ip follows the app's own 'trust proxy' setting.
        result = await receiveRequest(intake, req, routeKey, req.ip);
      }
    } catch (error) {
      result = intake.unexpected(error, 'express');
    }
    answerOnce(res, finalAnswer(result));
    tellListener(intake, onResult, result, req, startedAt);
    endTurn();
  };
}
