import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const CLI = join(import.meta.dirname, '../../dist/cli/main.js');

export interface ServeProcess {
  child: ChildProcess;
  /** Base URL, e.g. http://127.0.0.1:40123 */
  url: string;
  stdout: string[];
  stderr: string[];
  exited: Promise<number | null>;
}

/** Starts the real `prequal-hooks serve` and resolves once it listens (its first log line says where). */
export async function startServe(args: string[], env: NodeJS.ProcessEnv = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--host', '127.0.0.1', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${stderr.join('')}`)), 15_000);
    createInterface({ input: child.stdout! }).on('line', (line) => stdout.push(line));
    createInterface({ input: child.stderr! }).on('line', (line) => {
      stderr.push(line);
      const match = /receiving webhooks on POST (http:\/\/[^\s"]+?)\/webhooks/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${stderr.join('')}`)));
  });
  return { child, url, stdout, stderr, exited };
}
