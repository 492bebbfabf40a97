// The database of the accounts-spread benchmark (bench/accounts-spread.ts): accounts added with the
// real CLI (`prequal-hooks accounts add --json`, the accounts key made beside the database), then
// copied for every run so that each starts from the same registry and an empty inbox.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { removeDatabase } from './database.js';

const run = promisify(execFile);

/** An account's webhook path and the secret its deliveries are signed with. */
export interface SpreadRoute {
  account: string;
  path: string;
  secret: string;
}

/** Adds one account with the CLI, its secret given, and returns its route. */
async function addAccount(cli: string, db: string, n: number, env: Record<string, string>): Promise<SpreadRoute> {
  const account = `agency-${String(n).padStart(2, '0')}`;
  const secret = `whsec_${randomBytes(24).toString('hex')}`;
  const { stdout } = await run(process.execPath, [cli, 'accounts', 'add', '--db', db, '--account', account, '--secret', secret, '--json'], {
    env: { ...process.env, ...env },
  });
  const added = JSON.parse(stdout) as { account: string; webhookPath: string };
  return { account: added.account, path: added.webhookPath, secret };
}

/**
 * Adds `count` accounts to `db`, one CLI process each: the first alone (it creates the database
 * and its accounts key), the others 4 at a time (node's start-up is most of a command's time).
 */
export async function addAccounts(cli: string, db: string, count: number, env: Record<string, string>): Promise<SpreadRoute[]> {
  const routes: SpreadRoute[] = [await addAccount(cli, db, 0, env)];
  for (let n = 1; n < count; n += 4) {
    const batch = Array.from({ length: Math.min(4, count - n) }, (_, k) => addAccount(cli, db, n + k, env));
    routes.push(...(await Promise.all(batch)));
  }
  return routes;
}

const SQLITE_FILES = ['', '-wal', '-shm', '.accounts-key'];

/** A copy of the template database, its WAL and its accounts key, at `to` (replacing any). */
export function copyDatabase(template: string, to: string): void {
  removeDatabase(to);
  for (const suffix of SQLITE_FILES) {
    if (existsSync(`${template}${suffix}`)) copyFileSync(`${template}${suffix}`, `${to}${suffix}`);
  }
}
