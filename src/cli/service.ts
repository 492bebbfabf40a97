import { createClient, type Client } from '../client/client.js';
import { UsageError, type CommandIo } from './args.js';

/** The flags that say how to reach the service's API (reconcile, serve --reconcile-every). */
export const SERVICE_FLAGS = { 'api-url': { type: 'string' }, 'api-key': { type: 'string' } } as const;

/**
 * A client of the service from `--api-url`/`--api-key`, or PREQUAL_HOOKS_API_URL and
 * PREQUAL_HOOKS_API_KEY (the key is better in the environment: flags show in the process list).
 * `needs` names the option that asks for it, in the usage error (none: the command itself).
 */
export function serviceClient(values: { 'api-url'?: string | undefined; 'api-key'?: string | undefined }, io: CommandIo, needs?: string): { client: Client; apiUrl: string } {
  const ask = needs === undefined ? 'give' : `${needs} needs`;
  const apiUrl = values['api-url'] ?? io.env.PREQUAL_HOOKS_API_URL;
  const apiKey = values['api-key'] ?? io.env.PREQUAL_HOOKS_API_KEY;
  if (!apiUrl) throw new UsageError(`${ask} the service address: --api-url <url> or PREQUAL_HOOKS_API_URL`);
  if (!apiKey) throw new UsageError(`${ask} the agency API key: PREQUAL_HOOKS_API_KEY (or --api-key)`);
  try {
    return { client: createClient({ apiKey, baseUrl: apiUrl }), apiUrl };
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/^createClient: /, '--api-url: '));
  }
}
