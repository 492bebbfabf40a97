import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorAnswer, type Answer } from './answer.js';
import type { Intake, IntakeResult } from './intake.js';
import { readRawBody } from './raw-body.js';

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

/** Reads the request's exact bytes (within the limit) and hands them to the intake. */
export async function receiveRequest(intake: Intake, req: IncomingMessage): Promise<IntakeResult> {
  const reading = await readRawBody(req, intake.maxBodyBytes);
  return reading.ok
    ? intake.receive({ rawBody: reading.body, headers: req.headers })
    : { outcome: 'refused', answer: reading.answer };
}

export type ResultListener = (result: IntakeResult, req: IncomingMessage, startedAt: bigint) => void;

/**
 * A node:http request listener for the intake: no framework between the socket and the inbox.
 * Answers 405 to anything but POST.
 */
export function nodeHandler(intake: Intake, onResult?: ResultListener) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const startedAt = process.hrtime.bigint();
    let result: IntakeResult;
    if (req.method !== 'POST') {
      result = {
        outcome: 'refused',
        answer: errorAnswer(405, 'METHOD_NOT_ALLOWED', 'Webhooks are delivered with POST.', {}, { Allow: 'POST' }),
      };
    } else {
      result = await receiveRequest(intake, req);
    }
    writeAnswer(res, result.answer);
    onResult?.(result, req, startedAt);
  };
}
