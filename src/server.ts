import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorAnswer } from './receive/answer.js';
import { writeAnswer } from './receive/node-http.js';
import { createReceiver, type Receiver, type ReceiverOptions } from './receiver.js';
import type { Logger } from './logging.js';

export interface StandaloneOptions extends Omit<ReceiverOptions, 'onRequest' | 'logger'> {
  logger: Logger;
  port?: number;
  host?: string;
  /** The webhook route. Default `/webhooks`. */
  path?: string;
}

export interface Standalone {
  receiver: Receiver;
  server: Server;
  url: string;
  /** Stops accepting, finishes requests in flight, drains, closes the database. */
  close(timeoutMs?: number): Promise<void>;
}

/**
 * The standalone receiver: node:http straight into the framework-free intake (no framework on
 * the webhook route), plus `GET /healthz` and `GET /readyz`. Nothing else is served.
 */
export async function startStandalone(options: StandaloneOptions): Promise<Standalone> {
  const { logger, port = 8787, host = '0.0.0.0', path = '/webhooks', ...receiverOptions } = options;
  const receiver = createReceiver({
    ...receiverOptions,
    logger,
    onRequest(result, _req, startedAt) {
      logger.info(
        {
          status: result.answer.status,
          outcome: result.outcome,
          kind: result.kind,
          duplicate: result.outcome === 'duplicate',
          inboxId: result.inboxId,
          ms: Number(process.hrtime.bigint() - startedAt) / 1e6,
        },
        'webhook',
      );
    },
  });
  const intake = receiver.nodeHandler();
  let closing = false;

  async function ready(): Promise<{ ok: boolean; reason?: string }> {
    if (closing) return { ok: false, reason: 'shutting down' };
    if (receiver.saturated()) {
      const stuck = receiver.stuckHandlerCalls();
      return { ok: false, reason: stuck > 0 ? `handlers saturated: ${stuck} handler calls stuck past their timeout` : 'handlers saturated' };
    }
    return await receiver.probe();
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = (req.url ?? '/').split('?')[0];
    if (url === path) {
      if (closing) {
        writeAnswer(res, errorAnswer(503, 'SHUTTING_DOWN', 'The receiver is shutting down; retry.', {}, { 'Retry-After': '5', Connection: 'close' }));
        return;
      }
      void intake(req, res);
      return;
    }
    if (req.method === 'GET' && url === '/healthz') {
      writeAnswer(res, { status: 200, headers: {}, body: { status: 'ok' } });
      return;
    }
    if (req.method === 'GET' && url === '/readyz') {
      void (async () => {
        const state = await ready();
        const inbox = await receiver.counts().catch(() => undefined);
        writeAnswer(res, {
          status: state.ok ? 200 : 503,
          headers: {},
          body: { status: state.ok ? 'ready' : 'not_ready', ...(state.reason && { reason: state.reason }), ...(inbox && { inbox }) },
        });
      })();
      return;
    }
    req.resume();
    writeAnswer(res, errorAnswer(404, 'RESOURCE_NOT_FOUND', `Nothing is served at ${req.method} ${url}. Webhooks go to POST ${path}.`));
  });
  // Against slow or stuck clients: a sender that has not sent its headers or body in time is cut off.
  server.headersTimeout = 10_000;
  server.requestTimeout = 15_000;
  server.keepAliveTimeout = 5_000;
  server.maxHeadersCount = 100;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    receiver,
    server,
    url: `http://${shownHost === '0.0.0.0' ? '127.0.0.1' : shownHost}:${address.port}`,
    async close(timeoutMs = 10_000): Promise<void> {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), Math.max(0, timeoutMs - 2000));
      await closed;
      clearTimeout(timer);
      await receiver.close(Math.max(1000, timeoutMs / 2));
    },
  };
}
