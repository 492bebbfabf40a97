// Runs the real, built `prequal-hooks` (dist/cli/main.js) as a child process, as users run it.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
export const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));
export const SHUFFLED = `${FIXTURES}scenarios/campaign-lifecycle.shuffled.ndjson`;

const children = new Set<ChildProcess>();

/** Kills whatever a test left running (call in afterAll/afterEach). */
export function killChildren(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
}

/** The test runner's environment without the variables the CLI reads, plus `extra`. */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { PREQUAL_HOOKS_DB: _db, PREQUAL_HOOKS_SCHEMA: _schema, PREQUAL_HOOKS_SECRET: _secret, PORT: _port, ...rest } = process.env;
  return { ...rest, ...extra };
}

function spawnCli(args: string[], options: { env?: Record<string, string>; cwd?: string; script?: string; input?: string }): ChildProcess {
  const child = spawn(process.execPath, [options.script ?? CLI, ...args], {
    env: cliEnv(options.env),
    cwd: options.cwd,
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (options.input !== undefined) child.stdin!.end(options.input);
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs one command to its end as a real process (killed after `timeoutMs`), with `input` on its
 * standard input if given. command-io.ts's runCli runs it in this process instead.
 */
export function runCliProcess(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number; input?: string } = {},
): Promise<CliResult> {
  const child = spawnCli(args, options);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`prequal-hooks ${args.join(' ')} did not finish in time; stderr: ${stderr}`));
    }, options.timeoutMs ?? 15_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface ServeProcess {
  child: ChildProcess;
  /** Where webhooks go, e.g. http://127.0.0.1:40123/webhooks */
  webhookUrl: string;
  /** e.g. http://127.0.0.1:40123 */
  baseUrl: string;
  stdout: () => string;
  stderr: () => string;
  /** stdout's JSON log lines, parsed. */
  logLines: () => Array<Record<string, unknown>>;
  /** Sends a signal and resolves with the exit code (rejects when it takes longer than `timeoutMs`). */
  stop: (signal?: NodeJS.Signals, timeoutMs?: number) => Promise<number | null>;
}

/** Starts `prequal-hooks serve` and resolves once it says where it listens. */
export async function startServe(args: string[], env: Record<string, string> = {}, timeoutMs = 10_000): Promise<ServeProcess> {
  return startListening(spawnCli(['serve', ...args], { env }), timeoutMs);
}

/** Starts a Node script that says "receiving webhooks on POST <url>" as serve does (a test app). */
export async function startScript(
  script: string,
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 10_000,
): Promise<ServeProcess> {
  return startListening(spawnCli(args, { env, script }), timeoutMs);
}

async function startListening(child: ChildProcess, timeoutMs: number): Promise<ServeProcess> {
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const webhookUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start in time; stderr: ${stderr}`)), timeoutMs);
    const look = () => {
      const match = /receiving webhooks on POST (https?:\/\/[^\s"]+)/.exec(stdout + stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => ((stdout += chunk), look()));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => ((stderr += chunk), look()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code} before listening; stderr: ${stderr}`));
    });
  });
  return {
    child,
    webhookUrl,
    baseUrl: new URL(webhookUrl).origin,
    stdout: () => stdout,
    stderr: () => stderr,
    logLines: () =>
      stdout
        .split('\n')
        .slice(0, -1) // the last piece is an unfinished line (or empty)
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    async stop(signal = 'SIGTERM', stopTimeoutMs = 8000) {
      child.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`serve did not exit within ${stopTimeoutMs} ms of ${signal}`)), stopTimeoutMs);
      });
      try {
        return await Promise.race([exited, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Reads the SQLite file as a user would, on its own read-only connection. */
export function readDb<T>(path: string, read: (db: Database.Database) => T): T {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

export interface SandboxProcess {
  child: ChildProcess;
  /** e.g. http://127.0.0.1:40123 */
  baseUrl: string;
  /** e.g. http://127.0.0.1:40123/api/v1 */
  apiUrl: string;
  /** The key it generated, when no --api-key was given. */
  generatedApiKey: string | undefined;
  /** What it printed for the user: the address, the key, the webhooks, the deliveries' route. */
  stdout: () => string;
  /** Its diagnostics. */
  stderr: () => string;
  stop: (signal?: NodeJS.Signals, timeoutMs?: number) => Promise<number | null>;
}

/** Starts `prequal-hooks sandbox` and resolves once it says where its API is (on stdout). */
export async function startSandbox(args: string[], env: Record<string, string> = {}, timeoutMs = 10_000): Promise<SandboxProcess> {
  const child = spawnCli(['sandbox', ...args], { env });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const apiUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sandbox did not start in time; stderr: ${stderr}`)), timeoutMs);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      // The address, key and webhook lines come in one write that ends with the Deliveries line.
      const match = /API on (http:\/\/\S+\/api\/v1)[\s\S]*\nDeliveries:/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`sandbox exited with ${code} before listening; stderr: ${stderr}`));
    });
  });
  return {
    child,
    apiUrl,
    baseUrl: new URL(apiUrl).origin,
    generatedApiKey: /generated; send it as X-API-Key\): (\S+)/.exec(stdout)?.[1],
    stdout: () => stdout,
    stderr: () => stderr,
    async stop(signal = 'SIGTERM', stopTimeoutMs = 8000) {
      child.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`sandbox did not exit within ${stopTimeoutMs} ms of ${signal}`)), stopTimeoutMs);
      });
      try {
        return await Promise.race([exited, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
