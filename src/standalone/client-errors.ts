// What Node itself refuses before a request exists (malformed HTTP, too slow, headers too large)
// gets the service's envelope too, and a log line with the status actually sent.
import { STATUS_CODES, maxHeaderSize } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../logging.js';
import type { RefusalSummary } from './refusals.js';

/** A sender that has not sent its headers within this is cut off (408). */
export const HEADERS_TIMEOUT_MS = 10_000;
/** A sender that has not sent its whole request within this is cut off (408). */
export const REQUEST_TIMEOUT_MS = 15_000;

/** Answers what Node refuses; each refusal is counted in `refusals`' summary line, not logged alone. */
export function answerClientErrors(logger: Logger, refusals: RefusalSummary): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  return (error, socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    // Bytes that are not HTTP at all are no webhook: a line at debug, never in the access log.
    // A TLS ClientHello (0x16 0x03) gets no answer, as it could not read one.
    const packet = (error as { rawPacket?: Buffer }).rawPacket;
    if (packet !== undefined && packet[0] === 0x16 && packet[1] === 0x03) {
      socket.destroy();
      logger.debug(
        { outcome: 'not_http', tls: true },
        'a TLS handshake reached this plain-HTTP port (was https:// used for an http:// receiver?); connection closed',
      );
      return;
    }
    const [status, code, message] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'HEADERS_TOO_LARGE', `The request headers are larger than ${maxHeaderSize} bytes in all.`]
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [
              408,
              'REQUEST_TIMEOUT',
              `The request was not received in time (headers within ${HEADERS_TIMEOUT_MS / 1000} s, the whole request within ${REQUEST_TIMEOUT_MS / 1000} s).`,
            ]
          : [400, 'BAD_REQUEST', 'The request is not valid HTTP.'];
    const body = JSON.stringify({ error: { code, message } });
    // Destroyed once written, not just ended: a sender still writing a body (or holding its half
    // open) would otherwise keep the request, and the bytes it holds, alive past the timeout.
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      () => socket.destroy(),
    );
    if (status === 400) logger.debug({ status, outcome: 'not_http', code: error.code }, 'bytes that are not HTTP; answered 400 and closed');
    else refusals.note(code, status, (socket as Duplex & { remoteAddress?: string }).remoteAddress);
  };
}
