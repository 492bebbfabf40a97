// The load: a pool of distinct, signed webhook requests, fired by autocannon (50 connections,
// bounded duration) or by a paced sender at a fixed rate.
import { createHmac } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import autocannon from 'autocannon';
import { createEventSpace } from './events.js';

const sign = (secret, body) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/**
 * Distinct signed events, built ahead of the rounds so that the load generator spends its time
 * sending; past the pool, events are built on the fly (counted in `builtOnTheFly`), so a
 * request is never a repeat whatever the rate.
 */
export function createRequestPool({ secret, size, seed = 777 }) {
  const space = createEventSpace(seed);
  space.extend(size);
  const bodies = [];
  const signatures = [];
  const kinds = [];
  let builtOnTheFly = 0;
  const add = (i) => {
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
      return { body: bodies[i], signature: signatures[i], kind: kinds[i] };
    },
    eventAt: (i) => space.eventAt(i),
  };
}

/** The headers each target expects: the service's, or GitHub's for @octokit/webhooks. */
export const HEADER_STYLES = {
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
export function fire({ url, pool, cursor, headerStyle, connections, durationSec, amount }) {
  const headersFor = HEADER_STYLES[headerStyle];
  const started = performance.now();
  let last = started;
  return new Promise((resolve, reject) => {
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
            setupRequest(req) {
              const i = cursor.next++;
              const r = pool.at(i);
              req.headers = headersFor(r, i);
              req.body = r.body;
              return req;
            },
            // An `amount` run is timed to its last answer: autocannon notices its end on a 1 s
            // tick, and its own duration is in whole seconds.
            ...(amount !== undefined && { onResponse: () => (last = performance.now()) }),
          },
        ],
      },
      (error, result) => (error ? reject(error) : resolve(amount === undefined ? result : { ...result, wallMs: last - started })),
    );
  });
}

/** What a round reports: 2xx per second and latency percentiles (ms). */
export function summariseRun(result) {
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
export async function pacedSend({ url, pool, from, ratePerSec, durationSec, connections = 50, headerStyle = 'service' }) {
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
  await new Promise((resolve) => {
    const send = (k) => {
      const r = pool.at(from + k);
      sentAt[k] = wall();
      const req = httpRequest(
        { agent, host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: { ...headersFor(r, from + k), 'content-length': r.body.length } },
        (res) => {
          okAt[k] = wall();
          status[k] = res.statusCode;
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
    const tick = () => {
      const due = Math.min(count, Math.floor(((performance.now() - started) / 1000) * ratePerSec));
      while (sent < due) send(sent++);
      if (sent < count) setTimeout(tick, 1);
    };
    tick();
  });
  agent.destroy();
  return { count, okAt, sentAt, status, failures, sendSeconds: (performance.now() - started) / 1000 };
}
