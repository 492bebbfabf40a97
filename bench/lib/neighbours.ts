// A neighbour route of the same Express app (GET /ping) while webhooks arrive at a fixed rate:
// its p99 beside the prequal-hooks middleware, against the same app whose webhook route only
// reads the body. The target: within 1.5×.
import autocannon from 'autocannon';
import { pacedSend, type RequestPool } from './load.js';
import { startServer } from './processes.js';
import type { NeighbourRound, NeighboursResult, ServerCommand } from './types.js';

type Variant = 'noop' | 'middleware';

export interface NeighboursRequest {
  /** The Express app of one variant, for one round. */
  command: (variant: Variant, round: number) => ServerCommand;
  pool: RequestPool;
  ratePerSec: number;
  durationSec: number;
  rounds: number;
}

function pings(url: string, durationSec: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) =>
    autocannon({ url: `${url}/ping`, connections: 4, duration: durationSec }, (error, result) => (error ? reject(error) : resolve(result))),
  );
}

export async function benchNeighbours({ command, pool, ratePerSec, durationSec, rounds }: NeighboursRequest): Promise<NeighboursResult> {
  const results: Record<Variant, NeighbourRound[]> = { noop: [], middleware: [] };
  let from = 0;
  for (let round = 0; round < rounds; round++) {
    for (const variant of round % 2 === 0 ? (['noop', 'middleware'] as const) : (['middleware', 'noop'] as const)) {
      const server = await startServer(command(variant, round));
      const [ping, sent] = await Promise.all([
        pings(server.url, durationSec),
        pacedSend({ url: server.url, pool, from, ratePerSec, durationSec, connections: 20 }),
      ]);
      from += sent.count;
      await server.stop();
      results[variant].push({
        pingP99Ms: ping.latency.p99,
        pingP50Ms: ping.latency.p50,
        pings: ping.requests.total,
        webhooks: sent.count,
        failures: sent.failures,
      });
    }
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const noopP99 = median(results.noop.map((r) => r.pingP99Ms));
  const middlewareP99 = median(results.middleware.map((r) => r.pingP99Ms));
  return {
    ratePerSec,
    durationSec,
    rounds: results,
    noopPingP99Ms: noopP99,
    middlewarePingP99Ms: middlewareP99,
    ratio: Math.round((middlewareP99 / Math.max(noopP99, 0.01)) * 100) / 100,
  };
}
