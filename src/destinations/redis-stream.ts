// A Redis stream as a destination of an account's changes (docs/destinations.md, "Redis Streams"):
// each change appended with XADD under the entry id `<seq>-0`, by one writer, in `seq` order. Redis
// refuses an explicit id at or below the stream's last, so a change appended before a crash and
// sent again after it is refused, not duplicated: that refusal is taken as "already there". Trimmed
// by time with `MINID ~` at the oldest change the feed still keeps. The `redis` client (node-redis)
// is an optional peer dependency, loaded on first use.
import { ConfigurationError } from '../errors.js';
import type { Change } from '../project/changes.js';
import { DeniedAddressError, type NetworkPolicy } from './network-policy.js';

/** What one entry holds: the change as the HTTP destinations POST it, and its keys to filter on without parsing. */
interface StreamEntry {
  change: string;
  entity: string;
  id: string;
  op: string;
  account: string;
}

/** The writer of one stream. */
export interface StreamWriter {
  /**
   * Appends the changes in the order given (increasing `seq`), one at a time: a failure stops the
   * run, so that nothing after a change that is not in the stream is ever in it. Returns the `seq`
   * of the last change that is in the stream now (appended, or found there), or `undefined` if none.
   */
  append(account: string, changes: readonly Change[]): Promise<number | undefined>;
  /** Drops entries below `seq` (approximately: whole nodes only, as `MINID ~` does). */
  trim(seq: number): Promise<void>;
  close(): Promise<void>;
  /** Closes the connection at once: a command in flight fails now. */
  destroy(): void;
}

/** The default stream of an account's changes. */
export function defaultStreamName(account: string): string {
  return `prequal-hooks:${account}:changes`;
}

/** Redis's answer to an explicit id at or below the stream's last entry. */
const ALREADY_THERE = /equal or smaller than the target stream top item/i;

type Client = Awaited<ReturnType<typeof connect>>;

async function loadRedis(): Promise<typeof import('redis')> {
  try {
    return await import('redis');
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new ConfigurationError(
      'A Redis destination needs node-redis, an optional peer dependency of prequal-hooks: `npm install redis` beside prequal-hooks',
      { cause: error },
    );
  }
}

async function connect(url: string, timeoutMs: number, signal: AbortSignal | undefined, policy: NetworkPolicy | undefined) {
  // An address written in the URL is not looked up: checked here, in whatever spelling it was given.
  const refused = policy?.hostRefusal(new URL(url).hostname);
  if (refused !== undefined) throw new DeniedAddressError(refused);
  const { createClient } = await loadRedis();
  if (signal?.aborted === true) throw new Error('stopped before connecting');
  // No offline queue: a command sent while the server is away fails at once and is retried by
  // the delivery loop on its schedule, instead of piling up in memory. A first connection that
  // fails fails the attempt (else connect() would wait for the server however long it is away);
  // once connected, the client reconnects by itself.
  let connected = false;
  const client = createClient({
    url,
    disableOfflineQueue: true,
    // A server that takes the command but never answers fails the attempt too; if it did append,
    // the next attempt is refused as already there.
    commandOptions: { timeout: timeoutMs },
    socket: {
      connectTimeout: timeoutMs,
      // A name is checked as it resolves, at each connection and reconnection.
      ...(policy !== undefined && { lookup: policy.lookup }),
      reconnectStrategy: (retries: number, cause: Error) => (connected ? Math.min(100 * 2 ** retries, 5_000) : cause),
    },
  });
  // Errors reach the caller through the commands; the client's own event would crash the process unheard.
  client.on('error', () => undefined);
  // Ended while it connects (the destination disabled or removed): no wait for the connect timeout.
  const abandon = () => client.destroy();
  signal?.addEventListener('abort', abandon, { once: true });
  try {
    await client.connect();
  } finally {
    signal?.removeEventListener('abort', abandon);
  }
  connected = true;
  return client;
}

/**
 * Opens a writer of `stream` on the server of `url` (`redis://host:port[/db]`, `rediss://` for
 * TLS); `signal` ends the connecting; `policy` refuses the addresses destinations never connect to.
 */
export async function openStreamWriter(
  url: string,
  stream: string,
  { timeoutMs = 15_000, signal, policy }: { timeoutMs?: number; signal?: AbortSignal; policy?: NetworkPolicy } = {},
): Promise<StreamWriter> {
  const client: Client = await connect(url, timeoutMs, signal, policy);
  return {
    async append(account, changes) {
      let last: number | undefined;
      for (const change of changes) {
        const entry: StreamEntry = {
          change: JSON.stringify({ ...change, account }),
          entity: change.entity,
          id: change.id,
          op: change.op,
          account,
        };
        try {
          await client.xAdd(stream, `${change.seq}-0`, { ...entry });
        } catch (error) {
          if (!ALREADY_THERE.test((error as Error).message)) throw error;
        }
        last = change.seq;
      }
      return last;
    },
    async trim(seq) {
      await client.xTrim(stream, 'MINID', `${seq}-0`, { strategyModifier: '~' });
    },
    async close() {
      if (client.isOpen) await client.close();
    },
    destroy() {
      if (client.isOpen) client.destroy();
    },
  };
}
