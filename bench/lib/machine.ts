// What the figures were measured on, so that a result file says which machine it speaks for.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { MachineInfo } from './types.js';

function version(root: string, name: string): string | null {
  try {
    return (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return null;
  }
}

function git(root: string, ...args: string[]): string | null {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

export function machineInfo(root: string, dataDir: string): MachineInfo {
  const cpus = os.cpus();
  let filesystem: string | null = null;
  try {
    filesystem = execFileSync('df', ['-T', dataDir], { encoding: 'utf8' }).trim().split('\n').at(-1)?.split(/\s+/)[1] ?? null;
  } catch {
    // df missing: leave it out
  }
  const memory = new Database(':memory:');
  const sqlite = memory.prepare('SELECT sqlite_version()').pluck().get() as string;
  memory.close();
  return {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    dataFilesystem: filesystem,
    loadAverageAtStart: os.loadavg().map((x) => Math.round(x * 100) / 100),
    versions: {
      sqlite,
      'better-sqlite3': version(root, 'better-sqlite3'),
      express: version(root, 'express'),
      '@octokit/webhooks': version(root, '@octokit/webhooks'),
      autocannon: version(root, 'autocannon'),
    },
  };
}

/** The commit, and whether src/ or migrations/ differ from it (others may be mid-change). */
export function gitInfo(root: string): { commit: string | null; uncommittedFiles: number } {
  const changed = (git(root, 'status', '--porcelain', '--', 'src', 'migrations') ?? '').split('\n').filter(Boolean);
  return { commit: git(root, 'rev-parse', '--short', 'HEAD'), uncommittedFiles: changed.length };
}
