// Per-account feed tokens (docs/changes.md): a token that opens one account's change feed and
// nothing else, set by `accounts set-feed-token`. The registry keeps its SHA-256 only, the digest
// serve compares a request's token with (in constant time, as its own tokens': console/auth.ts).
import { createHash } from 'node:crypto';
import type { AccountsRegistry, RegistrySnapshot } from '../store/accounts-registry.js';
import { pollRegistry } from './routes.js';

/** Shorter tokens can be guessed online: the floor of serve's own tokens. */
export const MIN_FEED_TOKEN_LENGTH = 16;

/** What the registry keeps of a feed token: its SHA-256, in hex. */
export function feedTokenDigest(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The accounts that have a feed token, each with its token's digest, as of one version of the registry. */
export interface FeedTokens {
  /** The registry's change stamp they were read at. */
  readonly version: number;
  /** In the registry's order (by account id). */
  readonly tokens: ReadonlyArray<{ readonly account: string; readonly digest: Buffer }>;
}

function feedTokensOf(snapshot: RegistrySnapshot): FeedTokens {
  return {
    version: snapshot.version,
    tokens: snapshot.accounts.flatMap((row) =>
      row.feed_token_sha256 === null ? [] : [{ account: row.account, digest: Buffer.from(row.feed_token_sha256, 'hex') }],
    ),
  };
}

/**
 * Reads the accounts' feed tokens once, then again whenever the registry's change stamp moves
 * (read every `everyMs`, default 1000), handing each new set to `onChange`. Resolves once the
 * first reading was tried (a failed one is told to `onError`, and the poll retries), with the
 * function that stops the poll.
 */
export async function watchFeedTokens(
  registry: Pick<AccountsRegistry, 'version' | 'snapshot'>,
  options: { everyMs?: number; onChange(tokens: FeedTokens): void; onError(error: unknown): void },
): Promise<() => void> {
  const source = { version: async () => (await registry.version()).version, read: async () => feedTokensOf(await registry.snapshot()) };
  let current: FeedTokens | undefined;
  try {
    current = await source.read();
    options.onChange(current);
  } catch (error) {
    options.onError(error);
  }
  return pollRegistry(source, { ...options, ...(current !== undefined && { current }) });
}
