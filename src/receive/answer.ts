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

/**
 * An answer as the bytes of a whole HTTP/1.1 response that closes its connection, for a socket
 * answered before (or without) Node's HTTP parser: a connection refused or shut out, a request
 * Node could not parse.
 */
export function rawAnswer(answer: Answer, reason: string): string {
  const json = JSON.stringify(answer.body);
  const headers = Object.entries({ ...answer.headers, Connection: 'close' })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return (
    `HTTP/1.1 ${answer.status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n${headers}` +
    `Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`
  );
}
