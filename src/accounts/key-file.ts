// The accounts key (docs/accounts.md): 32 random bytes in a file of its own, never in the database,
// so that a copy of the database or of its backup reveals no secret. Beside the key file, during
// and after a rekey: `<file>.next` (the new key, written before the re-encryption commits) and
// `<file>.<key id>`, one for each key a rekey replaced (never overwritten: a backup made before
// any rekey needs the key of its day). All are read, so that no crash between the steps of a rekey
// leaves the rows under a key no file holds, and a backup restored beside them opens.
import { closeSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { accountsKey, KEY_BYTES, type AccountsKey } from './cipher.js';
import { AccountsKeyError } from './errors.js';

export const NEXT_SUFFIX = '.next';
/** Where 0.4.0's rekey kept the one key it replaced (each rekey overwrote it): still read. */
const LEGACY_PREVIOUS_SUFFIX = '.previous';

/** Where a key replaced by a rekey is kept: `<key file>.<its id>`. */
export function retiredKeyPath(path: string, keyId: string): string {
  return `${path}.${keyId}`;
}

/** The retired keys beside the key file (`<key file>.<16 hex digits>`), and 0.4.0's `.previous`. */
function retiredKeyPaths(path: string): string[] {
  const prefix = `${basename(path)}.`;
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return []; // a folder that cannot be listed: the key file and its .next are still read
  }
  return [
    `${path}${LEGACY_PREVIOUS_SUFFIX}`,
    ...names
      .filter((name) => name.startsWith(prefix) && /^[0-9a-f]{16}$/.test(name.slice(prefix.length)))
      .map((name) => join(dirname(path), name)),
  ];
}

/** The keys found beside one key file path, by id. */
export interface Keyring {
  readonly path: string;
  /** The key of the file itself, if it exists. */
  readonly current: AccountsKey | undefined;
  /** A rekey's new key, if one was started. */
  readonly next: AccountsKey | undefined;
  readonly byId: ReadonlyMap<string, AccountsKey>;
  /** Key files others can read or change: what to tell the operator. */
  readonly warnings: readonly string[];
}

/** The key a file holds: 32 bytes as base64 (what this package writes) or 64 hex digits. */
export function parseKey(text: string, path: string): AccountsKey {
  const trimmed = text.trim();
  if (/^[0-9a-f]{64}$/i.test(trimmed)) return accountsKey(Buffer.from(trimmed, 'hex'));
  if (/^[A-Za-z0-9+/]{43}=?$/.test(trimmed)) return accountsKey(Buffer.from(trimmed, 'base64'));
  throw new AccountsKeyError(
    `${path} does not hold an accounts key: it must hold ${KEY_BYTES} bytes as base64 (44 characters) or 64 hex digits`,
  );
}

/** The file's key, or undefined when there is no such file. */
export function readKeyFile(path: string): AccountsKey | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new AccountsKeyError(`cannot read the accounts key file ${path}: ${(error as Error).message}`);
  }
  return parseKey(text, path);
}

/** The warning a key file others can read or change deserves (as serve gives its secret files). */
function looseKeyWarning(path: string): string | undefined {
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    return undefined;
  }
  if ((mode & 0o066) === 0) return undefined;
  const how = (mode & 0o044) !== 0 ? 'read' : 'changed';
  return `the accounts key file ${path} can be ${how} by other users (mode ${mode.toString(8)}): chmod 600 ${path}`;
}

export function loadKeyring(path: string): Keyring {
  const current = readKeyFile(path);
  const next = readKeyFile(`${path}${NEXT_SUFFIX}`);
  const retired = retiredKeyPaths(path);
  const byId = new Map<string, AccountsKey>();
  for (const key of [...retired.map(readKeyFile), next, current]) if (key !== undefined) byId.set(key.id, key);
  const warnings = [path, `${path}${NEXT_SUFFIX}`, ...retired].flatMap((p) => looseKeyWarning(p) ?? []);
  return { path, current, next, byId, warnings };
}

function syncDirectory(path: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dirname(path), 'r');
    fsyncSync(fd);
  } catch {
    // Not every platform lets a directory be opened or synced (Windows); the rename is still atomic.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Writes a key to a file that must not exist yet (O_EXCL: two processes never make two keys),
 * owner-only, synced to disk with its directory entry. Returns false when the file exists already.
 */
export function createKeyFile(path: string, key: AccountsKey): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new AccountsKeyError(`cannot create the accounts key file ${path}: ${(error as Error).message}`);
  }
  try {
    writeSync(fd, `${Buffer.from(key.key).toString('base64')}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  syncDirectory(path);
  return true;
}

/** A new random key. */
export function newKey(): AccountsKey {
  return accountsKey(randomBytes(KEY_BYTES));
}

/**
 * The last step of a rekey, once the rows are under the `.next` key: the key it replaces is
 * copied to `<key file>.<its id>` (named by what was read, and never overwritten), then `.next`
 * replaces the key file in one rename, so that the key file never goes missing. Safe to run
 * again, or by two processes at once.
 */
export function promoteNextKey(path: string, nextId: string): void {
  const current = readKeyFile(path);
  if (current !== undefined && current.id !== nextId) createKeyFile(retiredKeyPath(path, current.id), current);
  if (readKeyFile(`${path}${NEXT_SUFFIX}`)?.id === nextId) renameIfPresent(`${path}${NEXT_SUFFIX}`, path);
  syncDirectory(path);
}

function renameIfPresent(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
