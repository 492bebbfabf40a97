// Child processes of the harness: servers under test (port read from what they print), and
// one-shot commands measured from outside (wall time, peak RSS).
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import type { CommandRun, Exit, RunningServer, ServerCommand } from './types.js';

/**
 * Reads the port from a server's output: our bench servers' `{"listening":{"port":…}}` line,
 * or the first http://host:port the CLI prints (as a log record or as plain text).
 */
function portIn(text: string): number | null {
  for (const line of text.split('\n')) {
    if (!line.startsWith('{"listening"')) continue;
    try {
      return (JSON.parse(line) as { listening: { port: number } }).listening.port;
    } catch {
      // a partial line: read again later
    }
  }
  const url = text.match(/https?:\/\/(?:\[[^\]]*\]|[^\s/:"]+):(\d+)/);
  return url ? Number(url[1]) : null;
}

const live = new Set<ChildProcess>();

/** Stops every server still running (after a failure), each by its own pid. */
export function killLeftovers(): void {
  for (const child of live) child.kill('SIGKILL');
  live.clear();
}

/**
 * Starts a server as a child process with its stdout and stderr going to a file (so that a
 * server that logs every request costs the load generator nothing), and waits for its port.
 */
export async function startServer({ name, command, args, logFile, nodeOptions = [], env = {} }: ServerCommand): Promise<RunningServer> {
  const out = openSync(logFile, 'w');
  const child = spawn(command, [...nodeOptions, ...args], {
    stdio: ['ignore', out, out],
    env: { ...process.env, ...env },
  });
  closeSync(out);
  live.add(child);
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => (live.delete(child), resolve({ code, signal }))));
  let done: Exit | null = null;
  void exited.then((e) => {
    done = e;
  });
  const deadline = Date.now() + 20_000;
  for (;;) {
    const text = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
    const port = portIn(text);
    if (port) {
      return {
        name,
        pid: child.pid!,
        port,
        url: `http://127.0.0.1:${port}`,
        logFile,
        /** SIGTERM, then SIGKILL if it does not stop in time; resolves with how it exited. */
        async stop(timeoutMs = 30_000) {
          if (done) return done;
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
          const result = await exited;
          clearTimeout(timer);
          return result;
        },
      };
    }
    if (done) throw new Error(`${name} exited (${JSON.stringify(done)}) before listening:\n${text.slice(-2000)}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not print its port within 20 s:\n${text.slice(-2000)}`);
    }
    await delay(25);
  }
}

/**
 * Runs a command to completion, measuring wall time and peak RSS from outside: `/usr/bin/time -v`
 * when present ("Maximum resident set size"), otherwise polling VmHWM in /proc/<pid>/status.
 */
export async function measureCommand(
  command: string,
  args: readonly string[],
  { cwd, env }: { cwd?: string; env?: Record<string, string> } = {},
): Promise<CommandRun> {
  const useTime = existsSync('/usr/bin/time');
  const started = performance.now();
  const options = {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  } satisfies SpawnOptions;
  const child = useTime ? spawn('/usr/bin/time', ['-v', command, ...args], options) : spawn(command, [...args], options);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  let polledKb = 0;
  const poll = setInterval(() => {
    if (useTime) return;
    try {
      const m = readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmHWM:\s+(\d+) kB/);
      if (m) polledKb = Math.max(polledKb, Number(m[1]));
    } catch {
      // exited between two polls
    }
  }, 50);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearInterval(poll);
  const wallMs = performance.now() - started;
  let maxRssKb = polledKb;
  if (useTime) {
    const m = stderr.match(/Maximum resident set size \(kbytes\): (\d+)/);
    if (m) maxRssKb = Number(m[1]);
    stderr = stderr.replace(/\n?\tCommand being timed:[\s\S]*$/, '');
  }
  return { code, wallMs, maxRssKb, rssMethod: useTime ? '/usr/bin/time -v' : '/proc/<pid>/status VmHWM (polled)', stdout, stderr };
}

/** CPU time a process has used, user and system (µs, from /proc/<pid>/stat clock ticks); null where unreadable. */
export function cpuMicros(pid: number): number | null {
  try {
    // The fields after the command name (which may hold spaces), from field 3 (state): utime and stime are 14 and 15.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').at(-1)!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * (1_000_000 / CLOCK_TICKS);
  } catch {
    return null;
  }
}

// sysconf(_SC_CLK_TCK): 100 on every Linux Node runs on.
const CLOCK_TICKS = 100;

/** Bytes a process has had written to storage (/proc/<pid>/io write_bytes); null where unreadable. */
export function diskBytesWritten(pid: number): number | null {
  try {
    const m = readFileSync(`/proc/${pid}/io`, 'utf8').match(/^write_bytes:\s+(\d+)/m);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}
