// Which accounts key seals and opens the registry's values: the one whose id the registry records,
// found among the key file and its rekey companions (key-file.ts), read when first needed.
import { ConfigurationError } from '../errors.js';
import type { AccountsKey } from './cipher.js';
import { AccountsKeyError } from './errors.js';
import { createKeyFile, loadKeyring, newKey, promoteNextKey, type Keyring } from './key-file.js';

/** Where the key is, and what the caller is told when it is made or loose. */
export interface KeySource {
  /** The key file: given, or beside a SQLite database; undefined on PostgreSQL when none was given. */
  readonly path: string | undefined;
  /** Whether a missing key file may be made (SQLite: one process host; PostgreSQL replicas must share one). */
  readonly mayGenerate: boolean;
  /** Where the data lives, for messages. */
  readonly location: string;
  onNotice(message: string): void;
  /** Loaded at first need, again when the registry names a key it does not hold (another process rekeyed). */
  keyring?: Keyring;
  /** The key file this process generated, if it did. */
  generated?: string;
}

/** The key file's path, or the ConfigurationError that says to give one (PostgreSQL). */
export function requirePath(source: KeySource): string {
  if (source.path !== undefined) return source.path;
  throw new ConfigurationError(
    `the accounts registry of ${source.location} needs its key file: give --accounts-key-file (or PREQUAL_HOOKS_ACCOUNTS_KEY_FILE), ` +
      'the same file on every replica (on PostgreSQL none is generated, so that replicas never make two keys)',
  );
}

function load(source: KeySource, path: string): Keyring {
  const keyring = loadKeyring(path);
  if (source.keyring === undefined) for (const warning of keyring.warnings) source.onNotice(warning);
  source.keyring = keyring;
  return keyring;
}

/** The key of this id, from the key file or its companions; a clear error naming both ids when it is not there. */
export function keyOf(source: KeySource, keyId: string): AccountsKey {
  const path = requirePath(source);
  let keyring = source.keyring ?? load(source, path);
  if (!keyring.byId.has(keyId)) keyring = load(source, path);
  // The registry is under a rekey's new key whose file was not yet renamed: finish the rekey.
  if (keyring.next?.id === keyId && keyring.current?.id !== keyId) {
    promoteNextKey(path, keyId);
    keyring = load(source, path);
  }
  const key = keyring.byId.get(keyId);
  if (key !== undefined) return key;
  const holds = keyring.current === undefined ? 'there is no such file' : `it holds key ${keyring.current.id}`;
  throw new AccountsKeyError(
    `the accounts registry of ${source.location} is encrypted under the accounts key ${keyId}, and ${path} does not hold it (${holds}): ` +
      'give the key file it was written with (--accounts-key-file or PREQUAL_HOOKS_ACCOUNTS_KEY_FILE)',
  );
}

/** The key new values are sealed with: the registry's, or (before its first value) the key file's, made if missing where allowed. */
export function sealingKey(source: KeySource, registryKeyId: string | null): AccountsKey {
  if (registryKeyId !== null) return keyOf(source, registryKeyId);
  const path = requirePath(source);
  const keyring = source.keyring ?? load(source, path);
  if (keyring.current !== undefined) return keyring.current;
  if (!source.mayGenerate)
    throw new ConfigurationError(
      `no accounts key at ${path}: make one (head -c 32 /dev/urandom | base64 > ${path}; chmod 600 ${path}) and give the same file to every replica`,
    );
  if (createKeyFile(path, newKey())) {
    source.generated = path;
    source.onNotice(`generated the accounts key at ${path}; back it up apart from the database`);
  }
  // Made by us, or by another process a moment before (O_EXCL): read back what is there.
  const made = load(source, path).current;
  if (made === undefined) throw new AccountsKeyError(`the accounts key file ${path} disappeared as it was made`);
  return made;
}
