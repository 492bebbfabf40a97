// The threads that work beside the intake (the operator reads, the destinations' delivery): where
// their module is, and their lower CPU priority, so that on a machine with few cores they yield to
// the thread answering webhooks.
import { existsSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';

/**
 * A thread's module `file` (`reader-thread.js`), beside the module `from` (its `import.meta.url`)
 * once built. Run from the TypeScript sources (the tests), the built one in dist/, since a thread
 * cannot load TypeScript on Node 20; undefined when neither exists.
 */
export function threadModule(from: string, file: string): URL | undefined {
  const beside = new URL(`./${file}`, from);
  if (existsSync(fileURLToPath(beside))) return beside;
  const sources = /^(.*)\/src\/((?:[^/]+\/)*)[^/]+\.ts$/.exec(from);
  if (sources === null) return undefined;
  const built = new URL(`${sources[1]}/dist/${sources[2]}${file}`);
  return existsSync(fileURLToPath(built)) ? built : undefined;
}

/**
 * Lowers the calling thread's CPU priority where the system allows it per thread (Linux: its id,
 * from /proc/thread-self); elsewhere, or when not allowed, it keeps the process's.
 */
export function lowerPriority(): void {
  try {
    const thread = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
    if (Number.isInteger(thread) && thread > 0) setPriority(thread, 10);
  } catch {
    // Not Linux, or not allowed: the same priority as the rest of the process.
  }
}

/** An error as it crosses between threads (a structured clone keeps no class): its name, message and code. */
export interface ErrorShape {
  name: string;
  message: string;
  code: string | undefined;
}

/** The shape of `error` to post to another thread, which makes an error of it again. */
export function errorShape(error: unknown): ErrorShape {
  const code = (error as { code?: unknown } | undefined)?.code;
  return {
    name: error instanceof Error ? error.name : 'Error',
    message: error instanceof Error ? error.message : String(error),
    code: typeof code === 'string' ? code : undefined,
  };
}
