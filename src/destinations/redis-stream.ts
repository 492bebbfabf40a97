// A Redis stream as a destination of an account's changes (docs/destinations.md, "Redis Streams"):
// each change appended with XADD under the entry id `<seq>-0`, by one writer, in `seq` order, with
// the `webhook_id` the change has for this destination. Redis refuses an explicit id at or below
// the stream's last, so a change appended before a crash and sent again after it is refused, not
// duplicated: that refusal counts as "already there" only when the entry at `<seq>-0` is this very
// change. Any other refusal means the stream holds what this destination did not write (another
// receiver's or account's stream, or a database restored from an older backup), and appending
// stops (StreamNotOursError). Trimmed by time with `MINID ~` at the oldest change the feed still
// keeps. The `redis` client (node-redis) is an optional peer dependency, loaded on first use.
import { ConfigurationError } from '../errors.js';
import type { Change } from '../project/changes.js';
import { DeniedAddressError, type NetworkPolicy } from './network-policy.js';
import type { ClientTls } from './authentication.js';

/** What one entry holds: the change as the HTTP destinations POST it, and its keys to filter on without parsing. */
interface StreamEntry {
  change: string;
  entity: string;
  id: string;
  op: string;
  account: string;
  /** The change's `webhook-id` for this destination (docs/destinations.md): what tells our entries from others'. */
  webhook_id: string;
}

/** The stream holds, at or above a change's id, entries this destination did not write: nothing more may be appended. */
export class StreamNotOursError extends Error {
  override readonly name = 'StreamNotOursError';
  constructor(
    readonly stream: string,
    readonly seq: number,
    /** The stream's last entry id. */
    readonly lastId: string | undefined,
  ) {
    super(
      `the Redis stream "${stream}" already holds entries up to ${lastId ?? 'an unknown id'} that this destination did not write ` +
        `(another receiver's or account's stream, or a database restored from an older backup): change ${seq} was not appended, ` +
        `and nothing more is until \`prequal-hooks destinations enable\``,
    );
  }
}

/** The writer of one stream. */
export interface StreamWriter {
  /**
   * Appends the changes in the order given (increasing `seq`), one at a time, each with its
   * `webhook-id` (`idOf`): a failure stops the run, so that nothing after a change that is not in
   * the stream is ever in it. Returns the `seq` of the last change that is in the stream now
   * (appended, or found there as ours), or `undefined` if none. Throws StreamNotOursError when
   * the stream holds another's entry at or above a change's id.
   */
  append(account: string, changes: readonly Change[], idOf: (change: Change) => string): Promise<number | undefined>;
  /** Drops entries below `seq` (approximately: whole nodes only, as `MINID ~` does). */
  trim(seq: number): Promise<void>;
  /**
   * Deletes (XDEL) the entries of an erased candidate's earlier changes: those at `seqs` (the ones
   * the feed still keeps) and any of that candidate below `keptFrom`, the oldest change the feed
   * keeps (what approximate trimming left). How many went.
   */
  forget(candidateId: string, seqs: readonly number[], keptFrom: number | null): Promise<number>;
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

async function connect(
  url: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  policy: NetworkPolicy | undefined,
  tls: ClientTls | undefined,
) {
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
      // rediss://: a client certificate (mutual TLS) and the authorities trusted instead of the system's.
      ...(tls !== undefined && { tls: true as const, ...tls }),
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
 * Whether the entry at `<seq>-0` is this change, appended before (a retry after a crash): the same
 * `webhook_id`; or, written by a version that did not store it, the same account, entity, id and seq.
 */
async function holdsOurs(client: Client, stream: string, seq: number, entry: StreamEntry): Promise<boolean> {
  const found = (await client.xRange(stream, `${seq}-0`, `${seq}-0`))?.[0];
  if (found === undefined) {
    // Gone from a stream this destination wrote to its top (deleted by an erasure, trimmed, sent
    // again by a replay): a stream only grows at its top, so it cannot be put back at its id.
    const top = (await client.xRevRange(stream, '+', '-', { COUNT: 1 }))?.[0]?.message.webhook_id;
    return top !== undefined && top.startsWith(writerOf(entry.webhook_id));
  }
  const held = found.message as Partial<Record<keyof StreamEntry, string>>;
  if (held.webhook_id !== undefined) return held.webhook_id === entry.webhook_id;
  return held.account === entry.account && held.entity === entry.entity && held.id === entry.id && seqOf(held.change) === seq;
}

/** The destination part of a webhook-id (`<destination>_<seq>_<hash>`), with its separator. */
function writerOf(webhookId: string): string {
  return `${webhookId.slice(0, webhookId.indexOf('_', webhookId.indexOf('_') + 1))}_`;
}

function seqOf(change: string | undefined): number | undefined {
  try {
    return (JSON.parse(change ?? 'null') as { seq?: number } | null)?.seq;
  } catch {
    return undefined;
  }
}

/** The stream's last entry id, for the reason a destination pauses with. */
async function lastIdOf(client: Client, stream: string): Promise<string | undefined> {
  return (await client.xRevRange(stream, '+', '-', { COUNT: 1 }))?.[0]?.id;
}

/**
 * Opens a writer of `stream` on the server of `url` (`redis://host:port[/db]`, `rediss://` for
 * TLS); `signal` ends the connecting; `policy` refuses the addresses destinations never connect to.
 */
export async function openStreamWriter(
  url: string,
  stream: string,
  { timeoutMs = 15_000, signal, policy, tls }: { timeoutMs?: number; signal?: AbortSignal; policy?: NetworkPolicy; tls?: ClientTls } = {},
): Promise<StreamWriter> {
  const client: Client = await connect(url, timeoutMs, signal, policy, tls);
  return {
    async append(account, changes, idOf) {
      let last: number | undefined;
      for (const change of changes) {
        const entry: StreamEntry = {
          change: JSON.stringify({ ...change, account }),
          entity: change.entity,
          id: change.id,
          op: change.op,
          account,
          webhook_id: idOf(change),
        };
        try {
          await client.xAdd(stream, `${change.seq}-0`, { ...entry });
        } catch (error) {
          if (!ALREADY_THERE.test((error as Error).message)) throw error;
          if (!(await holdsOurs(client, stream, change.seq, entry)))
            throw new StreamNotOursError(stream, change.seq, await lastIdOf(client, stream));
        }
        last = change.seq;
      }
      return last;
    },
    async forget(candidateId, seqs, keptFrom) {
      const ids = seqs.map((seq) => `${seq}-0`);
      // The tail below what the feed keeps, read a page at a time: trimming keeps it short.
      for (let from = '-'; ;) {
        const page = (await client.xRange(stream, from, keptFrom === null ? '+' : `(${keptFrom}-0`, { COUNT: 1000 })) ?? [];
        for (const entry of page) if (entry.message.entity === 'candidate' && entry.message.id === candidateId) ids.push(entry.id);
        if (page.length < 1000) break;
        from = `(${page.at(-1)!.id}`;
      }
      return ids.length === 0 ? 0 : await client.xDel(stream, ids);
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
