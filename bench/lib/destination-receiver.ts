// bench:destinations' destination, in a thread of its own (bench/destinations.ts): a node:http
// server on loopback answering 204 (or 500 on /outage while told to fail), recording when each
// change arrives. Off the load generator's event loop, so that receiving the changes does not slow
// the generator whose throughput the bench compares (serve's cost is what is measured). Arrivals
// go to the main thread every 20 ms, timed on the wall clock's high-resolution scale
// (`performance.timeOrigin + performance.now()`), which both threads share.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort } from 'node:worker_threads';

/** A change as it arrived at a path (one per serve). */
export interface Arrival {
  path: string;
  webhookId: string;
  /** ms since the epoch, high resolution. */
  at: number;
  seq: number;
  entity: string;
  id: string;
  events: string[];
}

/** What the thread tells the main thread. */
export type ReceiverMessage = { type: 'listening'; port: number } | { type: 'arrivals'; arrivals: Arrival[]; answered500: number };

/** What the main thread tells the thread. */
export type ReceiverCommand = { type: 'failing'; failing: boolean };

if (parentPort !== null) {
  const port = parentPort;
  let failing = false;
  let answered500 = 0;
  let told500 = 0;
  let batch: Arrival[] = [];
  const flush = () => {
    if (batch.length === 0 && answered500 === told500) return;
    port.postMessage({ type: 'arrivals', arrivals: batch, answered500 } satisfies ReceiverMessage);
    batch = [];
    told500 = answered500;
  };
  const receive = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const path = request.url ?? '/';
      if (path === '/outage' && failing) {
        answered500++;
        response.writeHead(500).end();
        return;
      }
      const at = performance.timeOrigin + performance.now();
      const change = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { seq: number; entity: string; id: string; events: string[] };
      const { seq, entity, id, events } = change;
      batch.push({ path, webhookId: String(request.headers['webhook-id']), at, seq, entity, id, events });
      response.writeHead(204).end();
    });
  };
  const server = createServer(receive);
  server.listen(0, '127.0.0.1', () =>
    port.postMessage({ type: 'listening', port: (server.address() as AddressInfo).port } satisfies ReceiverMessage),
  );
  setInterval(flush, 20);
  port.on('message', (command: ReceiverCommand) => {
    failing = command.failing;
  });
}
