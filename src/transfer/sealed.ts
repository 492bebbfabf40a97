// Before a copy: do the sealed values (account secrets, API keys, destinations' secrets) open under
// the accounts key given? They are copied as they are (the account and column they are bound to
// are the same on either engine), so the same key file opens them on the target; this check makes
// a wrong or missing key file a refusal before anything is written, rather than a receiver that
// cannot verify a webhook after. No value opened is kept or shown.
import { destinationScope, open, type SealedColumn } from '../accounts/cipher.js';
import type { Keyring } from '../accounts/key-file.js';
import type { Source } from './engines.js';
import { TransferError } from './errors.js';

interface Sealed {
  account: string;
  scope: string;
  column: SealedColumn;
  value: string;
  key_id: string;
  what: string;
}

async function sealedValues(source: Source): Promise<Sealed[]> {
  const secrets = await source.rows<{ account: string; ciphertext: string; key_id: string; secret_id: number }>(
    'SELECT account, ciphertext, key_id, secret_id FROM account_secrets ORDER BY secret_id',
  );
  const keys = await source.rows<{ account: string; api_key: string; api_key_key_id: string }>(
    'SELECT account, api_key, api_key_key_id FROM accounts WHERE api_key IS NOT NULL ORDER BY account',
  );
  const destinations = await source.rows<{ account: string; destination: string; sealed: string; key_id: string }>(
    'SELECT account, destination, sealed, key_id FROM destinations ORDER BY account, destination',
  );
  return [
    ...secrets.map((r) => ({
      account: r.account,
      scope: r.account,
      column: 'secret' as const,
      value: r.ciphertext,
      key_id: r.key_id,
      what: `a secret of account ${r.account}`,
    })),
    ...keys.map((r) => ({
      account: r.account,
      scope: r.account,
      column: 'api_key' as const,
      value: r.api_key,
      key_id: r.api_key_key_id,
      what: `the API key of account ${r.account}`,
    })),
    ...destinations.map((r) => ({
      account: r.account,
      scope: destinationScope(r.account, r.destination),
      column: 'destination' as const,
      value: r.sealed,
      key_id: r.key_id,
      what: `destination ${r.destination} of account ${r.account}`,
    })),
  ];
}

/** How many sealed values the source holds; each one opens under the keyring, or TransferError names the first that does not. */
export async function checkSealed(source: Source, keyring: Keyring): Promise<number> {
  const values = await sealedValues(source);
  for (const sealed of values) {
    const key = keyring.byId.get(sealed.key_id);
    if (key === undefined) {
      throw new TransferError(
        `${sealed.what} is sealed under accounts key ${sealed.key_id}, which ${keyring.path} does not hold: give the key file the source's receivers use (--accounts-key-file)`,
      );
    }
    if (open(key, sealed.scope, sealed.column, sealed.value) === undefined) {
      throw new TransferError(
        `${sealed.what} does not open under accounts key ${sealed.key_id} (${keyring.path}): it was altered, or the key file is not that key`,
      );
    }
  }
  return values.length;
}
