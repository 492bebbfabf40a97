// Refused requests and closed connections are counted, not logged one by one: under a flood the
// log grows by at most one line a second per reason, with the count and the addresses that sent
// most, whatever the flood's rate (a line a request was ~190 bytes each: 21.7 MB in ten minutes).
import type { Logger } from '../logging.js';

/** Addresses named in a summary line, the most frequent first. */
const TOP_CLIENTS = 3;
/** Distinct addresses counted a reason a second; past it, the rest are counted as one. */
const MAX_CLIENTS_COUNTED = 1000;
const OTHER_CLIENTS = '(others)';

export interface RefusalSummary {
  /** Counts one refusal: `reason` is the answer's code (or how a connection was closed), `status` what the client got. */
  note(reason: string, status: number | undefined, client: string | undefined): void;
  /** Writes what is counted now (at a stop). */
  flush(): void;
}

interface Tally {
  status: number | undefined;
  count: number;
  clients: Map<string, number>;
}

export function refusalSummary(logger: Logger, everyMs = 1000): RefusalSummary {
  let tallies = new Map<string, Tally>();
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const written = tallies;
    tallies = new Map();
    for (const [reason, tally] of written) {
      const clients = [...tally.clients]
        .sort((a, b) => b[1] - a[1])
        .slice(0, TOP_CLIENTS)
        .map(([client, count]) => ({ client, count }));
      logger.info(
        { outcome: 'refused', reason, ...(tally.status !== undefined && { status: tally.status }), count: tally.count, clients },
        `${tally.count} ${reason.startsWith('connection_') ? 'connection(s) closed' : 'request(s) refused'} (${reason}) in the last ${everyMs / 1000} s`,
      );
    }
  };
  return {
    note(reason, status, client) {
      let tally = tallies.get(reason);
      if (tally === undefined) tallies.set(reason, (tally = { status, count: 0, clients: new Map() }));
      tally.count++;
      const name = client ?? 'unknown';
      const key = tally.clients.has(name) || tally.clients.size < MAX_CLIENTS_COUNTED ? name : OTHER_CLIENTS;
      tally.clients.set(key, (tally.clients.get(key) ?? 0) + 1);
      timer ??= setTimeout(flush, everyMs).unref();
    },
    flush,
  };
}
