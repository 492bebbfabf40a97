import { createClient, type Client } from '../client/client.js';
import { serviceUrlProblem, withoutCredentials } from '../client/origin.js';
import { UsageError } from './args.js';
import { flag, optional } from './options.js';

/** The options that say how to reach the service's API (reconcile, serve --reconcile-every). */
export const SERVICE_OPTIONS = {
  'api-url': optional({ placeholder: '<url>', help: "the service's address, e.g. https://api.example.com", show: withoutCredentials }),
  'api-key': optional({
    placeholder: '<key>',
    help: "the agency's API key (prefer the environment: a flag is visible to other users in the process list)",
    secret: true,
    fileVariant: true,
  }),
  'allow-insecure-api-url': flag({
    help: 'accept a plain http:// --api-url on another host than this machine: the key then crosses the network readable',
  }),
};

export type ServiceValues = {
  'api-url'?: string | undefined;
  'api-key'?: string | undefined;
  'allow-insecure-api-url'?: boolean | undefined;
};

/**
 * A client of the service from the resolved `--api-url`, `--api-key` and
 * `--allow-insecure-api-url` (their variables already applied by the option table). `needs`
 * names the option that asks for it, in the usage error (none: the command itself).
 */
export function serviceClient(values: ServiceValues, needs?: string): { client: Client; apiUrl: string } {
  const ask = needs === undefined ? 'give' : `${needs} needs`;
  const apiUrl = values['api-url'];
  const apiKey = values['api-key'];
  const allowInsecureHttp = values['allow-insecure-api-url'] === true;
  if (!apiUrl) throw new UsageError(`${ask} the service address: --api-url <url> or PREQUAL_HOOKS_API_URL`);
  if (!apiKey) throw new UsageError(`${ask} the agency API key: PREQUAL_HOOKS_API_KEY (or --api-key)`);
  const problem = serviceUrlProblem(apiUrl, allowInsecureHttp, '--allow-insecure-api-url (or PREQUAL_HOOKS_ALLOW_INSECURE_API_URL=1)');
  if (problem !== undefined) throw new UsageError(`--api-url ${problem}`);
  return { client: createClient({ apiKey, baseUrl: apiUrl, allowInsecureHttp }), apiUrl };
}
