// The load: a pool of distinct, signed webhook requests, fired by autocannon (50 connections,
// bounded duration) or by a paced sender at a fixed rate.
import { Agent, request as httpRequest } from 'node:http';
import autocannon from 'autocannon';
import { sign } from 'prequal-hooks';
import { createEventSpace, type ServiceEvent } from './events.js';
import type { Cursor, HeaderStyle, PooledRequest, RunSummary } from './types.js';

export interface RequestPool {
  size: number;
  averageBytes: number;
  /** Requests built past the pool, during the rounds. */
  readonly builtOnTheFly: number;
  /** Body, signature and kind of request i. */
  at(i: number): PooledRequest;
  eventAt(i: number): ServiceEvent;
}

/** An autocannon result; `wallMs` (to the last answer) for a run of an `amount` of requests. */
export type FireResult = autocannon.Result & { wallMs?: number };

/**
 * Distinct signed events, built ahead of the rounds so that the load generator spends its time
 * sending; past the pool, events are built on the fly (counted in `builtOnTheFly`), so a
 * request is never a repeat whatever the rate.
 */
export function createRequestPool({ secret, size, seed = 777 }: { secret: string; size: number; seed?: number }): RequestPool {
  const space = createEventSpace(seed);
  space.extend(size);
  const bodies: Buffer[] = [];
  const signatures: string[] = [];
  const kinds: string[] = [];
  let builtOnTheFly = 0;
  const add = (i: number): void => {
    const event = space.eventAt(i);
    const body = Buffer.from(JSON.stringify(event));
    bodies[i] = body;
    signatures[i] = sign(secret, body);
    kinds[i] = event.event;
  };
  for (let i = 0; i < size; i++) add(i);
  let bytes = 0;
  for (const b of bodies) bytes += b.length;
  return {
    size,
    averageBytes: Math.round(bytes / size),
    get builtOnTheFly() {
      return builtOnTheFly;
    },
    /** Body, signature and kind of request i. */
    at(i) {
      if (bodies[i] === undefined) {
        builtOnTheFly++;
        add(i);
      }
      return { body: bodies[i]!, signature: signatures[i]!, kind: kinds[i]! };
    },
    eventAt: (i) => space.eventAt(i),
  };
}

/** The headers each target expects: the service's, or GitHub's for @octokit/webhooks. */
const HEADER_STYLES: Record<HeaderStyle, (r: PooledRequest, i: number) => Record<string, string>> = {
  service: (r) => ({
    'content-type': 'application/json',
    'x-service-signature': r.signature,
    'x-service-event': r.kind,
  }),
  github: (r, i) => ({
    'content-type': 'application/json',
    'x-hub-signature-256': r.signature,
    'x-github-event': 'prequal',
    'x-github-delivery': `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  }),
};

/**
 * One autocannon run, for `durationSec` or for `amount` requests (then `wallMs` is the time to the
 * last answer); request i of the run is pool entry `cursor.next++`, so a run never repeats an
 * event of the same server.
 */
export interface FireOptions {
  url: string;
  pool: RequestPool;
  cursor: Cursor;
  headerStyle: HeaderStyle;
  connections: number;
  durationSec?: number;
  amount?: number;
  /**
   * Where request i goes and the secret that signs it (signed as it is sent); without it, every
   * request goes to /webhooks with the pool's signature.
   */
  route?: (i: number) => { path: string; secret: string };
  /** Told each answer's request index and status (with pipelining 1, a connection's answer is to its last request). */
  onAnswer?: (i: number, status: number) => void;
}

export function fire({
  url,
  pool,
  cursor,
  headerStyle,
  connections,
  durationSec,
  amount,
  route,
  onAnswer,
}: FireOptions): Promise<FireResult> {
  const headersFor = HEADER_STYLES[headerStyle];
  const started = performance.now();
  let last = started;
  return new Promise<FireResult>((resolve, reject) => {
    autocannon(
      {
        url,
        connections,
        // A bounded number of requests, or a duration.
        ...(amount === undefined ? { duration: durationSec } : { amount }),
        pipelining: 1,
        timeout: 30,
        requests: [
          {
            method: 'POST',
            path: '/webhooks',
            setupRequest(req, context) {
              const i = cursor.next++;
              const r = pool.at(i);
              if (route === undefined) req.headers = headersFor(r, i);
              else {
                const to = route(i);
                req.path = to.path;
                req.headers = headersFor({ ...r, signature: sign(to.secret, r.body) }, i);
              }
              req.body = r.body;
              context.i = i;
              return req;
            },
            // An `amount` run is timed to its last answer: autocannon notices its end on a 1 s
            // tick, and its own duration is in whole seconds.
            ...((amount !== undefined || onAnswer !== undefined) && {
              onResponse: (status, _body, context) => {
                last = performance.now();
                onAnswer?.(context.i as number, status);
              },
            }),
          },
        ],
      },
      (error, result) => (error ? reject(error) : resolve(amount === undefined ? result : { ...result, wallMs: last - started })),
    );
  });
}

/** What a round reports: 2xx per second and latency percentiles (ms). */
export function summariseRun(result: autocannon.Result): RunSummary {
  const ok = result['2xx'];
  return {
    requestsPerSec: ok / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    meanMs: result.latency.average,
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationSec: result.duration,
  };
}

/**
 * Sends pool entries [from, from + count) at a fixed rate, evenly spaced (not autocannon's
 * per-second bursts), over keep-alive connections; records when each 2xx arrived
 * (wall-clock ms with sub-ms resolution, comparable across processes).
 */
export interface PacedSendOptions {
  url: string;
  pool: RequestPool;
  /** The first pool entry to send. */
  from: number;
  ratePerSec: number;
  durationSec: number;
  connections?: number;
  headerStyle?: HeaderStyle;
}

/** Each request's send and 2xx instants (wall-clock ms) and status, by position in the run. */
export interface PacedSend {
  count: number;
  okAt: Float64Array;
  sentAt: Float64Array;
  status: Uint16Array;
  failures: number;
  sendSeconds: number;
}

export async function pacedSend({
  url,
  pool,
  from,
  ratePerSec,
  durationSec,
  connections = 50,
  headerStyle = 'service',
}: PacedSendOptions): Promise<PacedSend> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const target = new URL('/webhooks', url);
  const headersFor = HEADER_STYLES[headerStyle];
  const count = Math.round(ratePerSec * durationSec);
  const okAt = new Float64Array(count);
  const sentAt = new Float64Array(count);
  const status = new Uint16Array(count);
  const wall = () => performance.timeOrigin + performance.now();
  let sent = 0;
  let answered = 0;
  let failures = 0;
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const send = (k: number): void => {
      const r = pool.at(from + k);
      sentAt[k] = wall();
      const req = httpRequest(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          headers: { ...headersFor(r, from + k), 'content-length': r.body.length },
        },
        (res) => {
          okAt[k] = wall();
          status[k] = res.statusCode ?? 0;
          res.resume();
          res.on('end', () => {
            if (++answered === count) resolve();
          });
        },
      );
      req.on('error', () => {
        failures++;
        if (++answered === count) resolve();
      });
      req.end(r.body);
    };
    const tick = (): void => {
      const due = Math.min(count, Math.floor(((performance.now() - started) / 1000) * ratePerSec));
      while (sent < due) send(sent++);
      if (sent < count) setTimeout(tick, 1);
    };
    tick();
  });
  agent.destroy();
  return { count, okAt, sentAt, status, failures, sendSeconds: (performance.now() - started) / 1000 };
}
