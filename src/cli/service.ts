import { createClient, type Client } from '../client/client.js';
import { serviceUrlProblem } from '../client/origin.js';
import { UsageError, type CommandIo } from './args.js';

/** The flags that say how to reach the service's API (reconcile, serve --reconcile-every). */
export const SERVICE_FLAGS = { 'api-url': { type: 'string' }, 'api-key': { type: 'string' }, 'allow-insecure-api-url': { type: 'boolean' } } as const;

/**
 * A client of the service from `--api-url`/`--api-key`, or PREQUAL_HOOKS_API_URL and
 * PREQUAL_HOOKS_API_KEY (the key is better in the environment: flags show in the process list).
 * `needs` names the option that asks for it, in the usage error (none: the command itself).
 */
export function serviceClient(
  values: { 'api-url'?: string | undefined; 'api-key'?: string | undefined; 'allow-insecure-api-url'?: boolean | undefined },
  io: CommandIo,
  needs?: string,
): { client: Client; apiUrl: string } {
  const ask = needs === undefined ? 'give' : `${needs} needs`;
  const apiUrl = values['api-url'] ?? io.env.PREQUAL_HOOKS_API_URL;
  const apiKey = values['api-key'] ?? io.env.PREQUAL_HOOKS_API_KEY;
  const allowInsecureHttp = values['allow-insecure-api-url'] === true || io.env.PREQUAL_HOOKS_ALLOW_INSECURE_API_URL === '1';
  if (!apiUrl) throw new UsageError(`${ask} the service address: --api-url <url> or PREQUAL_HOOKS_API_URL`);
  if (!apiKey) throw new UsageError(`${ask} the agency API key: PREQUAL_HOOKS_API_KEY (or --api-key)`);
  const problem = serviceUrlProblem(apiUrl, allowInsecureHttp, '--allow-insecure-api-url (or PREQUAL_HOOKS_ALLOW_INSECURE_API_URL=1)');
  if (problem !== undefined) throw new UsageError(`--api-url ${problem}`);
  return { client: createClient({ apiKey, baseUrl: apiUrl, allowInsecureHttp }), apiUrl };
}
