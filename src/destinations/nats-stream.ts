// A NATS JetStream subject as a destination of an account's changes (docs/destinations.md, "NATS
// JetStream"): each change published to the subject, one at a time in `seq` order, with the header
// `Nats-Msg-Id` set to the change's `webhook-id` for this destination, and counted only once a
// stream acknowledged it (PubAck). A publish redone after a crash or a lost acknowledgement is
// dropped by the stream's duplicate window (the PubAck says `duplicate`); past the window, the
// first publish of a connection, and any after a failure, first reads the subject's last message
// in its stream, and a message that is this very change counts as published. The stream is the
// operator's: a subject that no stream captures is refused (NoStreamError), not created. The
// client (`@nats-io/transport-node`, `@nats-io/jetstream`) is an optional peer dependency loaded
// on first use.
import { isIP } from 'node:net';
import { ConfigurationError } from '../errors.js';
import type { ClientTls } from './authentication.js';
import { DeniedAddressError, type NetworkPolicy } from './network-policy.js';

/** Messages an erasure reads at once from the stream, looking for the person's earlier changes. */
const FORGET_BATCH = 1000;

/** No JetStream stream captures the subject (or the server runs without JetStream): nothing was published. */
export class NoStreamError extends Error {
  override readonly name = 'NoStreamError';
  constructor(readonly subject: string) {
    super(
      `no JetStream stream captures the subject "${subject}" (or the NATS server runs without JetStream): nothing was published. ` +
        'Add a stream whose subjects take it (nats stream add … --subjects …); the destination is probed on its schedule and resumes by itself',
    );
  }
}

/** The publisher of one subject. */
export interface SubjectPublisher {
  /**
   * Publishes `body` with `Nats-Msg-Id: msgId`; resolves once a stream acknowledged it (or already
   * holds it: a duplicate, or, when `check`, the subject's last message is this one). Throws
   * NoStreamError when no stream captures the subject.
   */
  publish(body: string, msgId: string, check: boolean): Promise<{ duplicate: boolean }>;
  /**
   * Deletes from the stream, their bytes overwritten, the subject's messages published from `since`
   * on whose `Nats-Msg-Id` is one of `msgIds` (an erased person's earlier changes); how many.
   */
  forget(msgIds: ReadonlySet<string>, since: string): Promise<number>;
  /** Whether the connection is gone (made again at the next attempt). */
  readonly closed: boolean;
  close(): Promise<void>;
  /** Drops the connection at once: a publish in flight fails now. */
  destroy(): void;
}

type Nats = typeof import('@nats-io/transport-node');
type JetStream = typeof import('@nats-io/jetstream');

async function loadNats(): Promise<{ nats: Nats; jetstream: JetStream }> {
  try {
    return { nats: await import('@nats-io/transport-node'), jetstream: await import('@nats-io/jetstream') };
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new ConfigurationError(
      'A NATS destination needs the NATS client, an optional peer dependency of prequal-hooks: ' +
        '`npm install @nats-io/transport-node @nats-io/jetstream` beside prequal-hooks',
      { cause: error },
    );
  }
}

/** The address to connect to: a literal checked as written, a name resolved through the policy (refused where it denies). */
async function addressOf(hostname: string, policy: NetworkPolicy | undefined): Promise<string> {
  const host = hostname.replace(/^\[|\]$/g, '');
  const refused = policy?.hostRefusal(host);
  if (refused !== undefined) throw new DeniedAddressError(refused);
  if (isIP(host) !== 0 || policy === undefined) return host;
  return await new Promise((resolve, reject) =>
    policy.lookup(host, {}, (error, address) => {
      if (error !== null) reject(error);
      else resolve(typeof address === 'string' ? address : (address[0]?.address ?? host));
    }),
  );
}

/** A publish's error that means no stream takes the subject: no responders to a JetStream publish. */
function noStream(error: unknown): boolean {
  const name = (error as { name?: unknown }).name;
  return name === 'JetStreamNotEnabled' || name === 'NoRespondersError' || name === 'StreamNotFoundError';
}

type ConnectOptions = { timeoutMs?: number; signal?: AbortSignal; tls?: ClientTls };

/** A connection to `address` (the policy's) for the server of `parsed`, its user and TLS; `signal` abandons it. */
async function connect(nats: Nats, parsed: URL, address: string, options: ConnectOptions) {
  const { timeoutMs = 15_000, signal } = options;
  const secure = parsed.protocol === 'tls:';
  const host = isIP(address) === 6 ? `[${address}]` : address;
  // The name the certificate is checked against: the URL's, though the address connected to is the one the policy resolved.
  const tls = {
    servername: parsed.hostname.replace(/^\[|\]$/g, ''),
    ...(options.tls?.ca !== undefined && { ca: options.tls.ca }),
    ...(options.tls?.cert !== undefined && { cert: options.tls.cert, key: options.tls.key }),
  };
  const connecting = nats.connect({
    servers: `${host}:${parsed.port === '' ? 4222 : parsed.port}`,
    ...(parsed.username !== '' && { user: decodeURIComponent(parsed.username), pass: decodeURIComponent(parsed.password) }),
    timeout: timeoutMs,
    // One connection to the address checked: no reconnection elsewhere (the next attempt connects again), no cluster's gossip.
    reconnect: false,
    ignoreClusterUpdates: true,
    name: 'prequal-hooks destinations',
    ...(secure && { tls }),
  });
  const abandon = () => void connecting.then((nc) => nc.close()).catch(() => undefined);
  signal?.addEventListener('abort', abandon, { once: true });
  let connection;
  try {
    connection = await connecting;
  } finally {
    signal?.removeEventListener('abort', abandon);
  }
  return connection;
}

/**
 * Reads `subject`'s messages in `stream` from `since` (their headers only, through an ordered
 * consumer of its own) and deletes those of `msgIds`, their bytes overwritten (`erase`); how many.
 */
async function forgetMessages(
  jetstream: JetStream,
  js: ReturnType<JetStream['jetstream']>,
  { manager, stream }: { manager: Awaited<ReturnType<JetStream['jetstreamManager']>>; stream: string },
  subject: string,
  msgIds: ReadonlySet<string>,
  since: string,
  timeoutMs: number,
): Promise<number> {
  const last = (await manager.streams.info(stream)).state.last_seq;
  if (last === 0) return 0;
  const consumer = await js.consumers.get(stream, {
    filter_subjects: subject,
    deliver_policy: jetstream.DeliverPolicy.StartTime,
    opt_start_time: since,
    headers_only: true,
  });
  let deleted = 0;
  for (let done = false; !done;) {
    const batch = await consumer.fetch({ max_messages: FORGET_BATCH, expires: timeoutMs });
    let read = 0;
    for await (const message of batch) {
      read++;
      if (msgIds.has(message.headers?.get('Nats-Msg-Id') ?? '') && (await manager.streams.deleteMessage(stream, message.seq, true)))
        deleted++;
      if (message.seq >= last || message.info.pending === 0) {
        done = true;
        break; // not waiting for the batch's end: the subject holds no more
      }
    }
    if (read === 0) done = true;
  }
  return deleted;
}

/**
 * Opens a publisher of `subject` on the server of `url` (`nats://[user:password@]host:port`,
 * `tls://` for TLS); `signal` ends the connecting; `policy` refuses the addresses destinations
 * never connect to (the name is resolved through it, and the address it gave connected to).
 */
export async function openSubjectPublisher(
  url: string,
  subject: string,
  options: { timeoutMs?: number; signal?: AbortSignal; policy?: NetworkPolicy; tls?: ClientTls } = {},
): Promise<SubjectPublisher> {
  const { timeoutMs = 15_000, signal, policy } = options;
  const parsed = new URL(url);
  const address = await addressOf(parsed.hostname, policy);
  const { nats, jetstream } = await loadNats();
  if (signal?.aborted === true) throw new Error('stopped before connecting');
  const nc = await connect(nats, parsed, address, options);
  const js = jetstream.jetstream(nc, { timeout: timeoutMs });
  let manager: Awaited<ReturnType<JetStream['jetstreamManager']>> | undefined;

  /** The manager and the stream that captures the subject (NoStreamError when none does). */
  async function streamOf() {
    manager ??= await jetstream.jetstreamManager(nc, { timeout: timeoutMs, checkAPI: false });
    try {
      return { manager, stream: await manager.streams.find(subject) };
    } catch (error) {
      if (noStream(error)) throw new NoStreamError(subject);
      throw error;
    }
  }

  /** Whether the subject's last message, in the stream that captures it, is this one. */
  async function holds(msgId: string): Promise<boolean> {
    const { manager, stream } = await streamOf();
    const last = await manager.streams.getMessage(stream, { last_by_subj: subject });
    return last?.header?.get('Nats-Msg-Id') === msgId;
  }

  const forget = async (msgIds: ReadonlySet<string>, since: string) =>
    msgIds.size === 0 ? 0 : forgetMessages(jetstream, js, await streamOf(), subject, msgIds, since, timeoutMs);

  return {
    async publish(body, msgId, check) {
      if (check && (await holds(msgId))) return { duplicate: true };
      const headers = nats.headers();
      try {
        const ack = await js.publish(subject, body, { msgID: msgId, headers, timeout: timeoutMs, retries: 0 });
        return { duplicate: ack.duplicate };
      } catch (error) {
        if (noStream(error)) throw new NoStreamError(subject);
        throw error;
      }
    },
    forget,
    get closed() {
      return nc.isClosed();
    },
    async close() {
      if (!nc.isClosed()) await nc.close().catch(() => undefined);
    },
    destroy() {
      if (!nc.isClosed()) void nc.close().catch(() => undefined);
    },
  };
}
