/** The answer to one webhook request, independent of any HTTP framework. */
export interface Answer {
  /** The HTTP status. */
  status: number;
  /** Headers to set besides the content type (`Retry-After` on a 503). */
  headers: Record<string, string>;
  /** The JSON body: `{"received":true,"duplicate":…}`, or the service's error envelope. */
  body: unknown;
}

/** The service's own error envelope: `{"error":{"code","message","details"}}`. */
export function errorAnswer(
  status: number,
  code: string,
  message: string,
  details?: Record<string, unknown>,
  headers: Record<string, string> = {},
): Answer {
  return {
    status,
    headers,
    body: { error: details === undefined ? { code, message } : { code, message, details } },
  };
}

export const BODY_ALREADY_READ_MESSAGE =
  'The request body was read before the webhook middleware could verify its signature. ' +
  'Mount receiver.middleware() on its route before any body parser (express.json(), express.text(), ' +
  'express.urlencoded()), e.g. app.post("/webhooks", receiver.middleware()) above app.use(express.json()).';
