// Calls a sandbox's REST API as an agency's integration would, over real HTTP.
import { waitFor } from './wait-for.js';

/** Keys of the documented format, one agency each. */
export const KEY_A = `sk_test_live_${'a'.repeat(32)}`;
export const KEY_B = `sk_test_live_${'b'.repeat(32)}`;
export const KEY_OFF = `sk_test_live_${'0'.repeat(32)}`;

export interface ApiAnswer {
  status: number;
  body: any;
  headers: Headers;
}

export type ApiCall = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<ApiAnswer>;

/** `call(method, path, body)` against `apiUrl` with the key (null: no X-API-Key header). */
export function apiClient(apiUrl: string, key: string | null): ApiCall {
  return async (method, path, body, headers = {}) => {
    const response = await fetch(`${apiUrl}${path}`, {
      method,
      headers: {
        ...(key !== null && { 'x-api-key': key }),
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: response.status, body: parsed, headers: response.headers };
  };
}

export const JOB = {
  job_title: 'Cariste CACES 3',
  contract_type: 'CDD',
  job_description: 'Conduite de chariot frontal en plateforme logistique. Chargement et déchargement de semi-remorques.',
};

/** A candidate with a valid phone and e-mail, numbered so each is distinct. */
export function person(n: number, extra: Record<string, unknown> = {}) {
  return {
    first_name: `Prénom${n}`,
    last_name: `Nom${n}`,
    phone_number: `06${String(10_000_000 + n).slice(-8)}`,
    email: `candidat${n}@exemple.fr`,
    ...extra,
  };
}

/** One delivery attempt as `GET /sandbox/deliveries` lists it. */
export interface Attempt {
  identity: string;
  copy: string;
  outcome: string;
}

async function deliveries(baseUrl: string): Promise<{ idle: boolean; attempts: Attempt[] }> {
  return (await (await fetch(`${baseUrl}/sandbox/deliveries`)).json()) as { idle: boolean; attempts: Attempt[] };
}

/** Polls until the sandbox has nothing scheduled and nothing to deliver. */
export async function untilIdle(baseUrl: string, timeoutMs = 20_000) {
  return await waitFor(
    async () => {
      const state = await deliveries(baseUrl);
      return state.idle ? state : undefined;
    },
    timeoutMs,
    'the sandbox to have nothing scheduled and nothing to deliver',
    { everyMs: 50 },
  );
}
