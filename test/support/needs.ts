// Tests that need a tool from outside npm (PostgreSQL, Chromium, promtool, caddy, nginx…). Where
// it is missing they say so loudly and are skipped; under CI=true they fail instead, naming the
// tool and how to install it: a CI run that tested less than it says must not pass.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Whether this run is CI's (CI=true or CI=1, as CI services set it). */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.CI === 'true' || env.CI === '1';
}

/**
 * Where the executable is: the path `override` names (an environment variable such as
 * CHROMIUM_PATH) when set, else the first of `names` on PATH or in `alsoIn` (/usr/sbin, which a
 * user's PATH may lack).
 */
export function findExecutable(
  names: string[],
  { override, alsoIn = [] }: { override?: string | undefined; alsoIn?: string[] } = {},
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const runnable = (path: string) => {
    try {
      accessSync(path, constants.X_OK);
      return statSync(path).isFile();
    } catch {
      return false;
    }
  };
  if (override !== undefined && override !== '') return runnable(override) ? override : undefined;
  const dirs = [...(env.PATH ?? '').split(delimiter).filter((dir) => dir !== ''), ...alsoIn];
  return names.flatMap((name) => dirs.map((dir) => join(dir, name))).find(runnable);
}

/**
 * True when `found`. When not: under CI=true throws, which fails the test file (or the run, from a
 * global setup) with `tool` and `install` in the message; otherwise warns on stderr and returns
 * false, for `describe.skipIf(!needs(…))`. `untested` says what goes untested.
 */
export function needs(
  tool: string,
  found: boolean,
  { install, untested }: { install: string; untested: string },
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  if (found) return true;
  if (inCi(env)) {
    throw new Error(`${tool} is missing, and CI=true: ${untested} cannot be tested. Install it: ${install}.`);
  }
  warnSkipped(`NO ${tool.toUpperCase()}: SKIPPED ${untested} (under CI=true, this fails).`, `Install it: ${install}.`);
  return false;
}

/** Says on stderr, so that nobody misses it in a run's output, that some tests were skipped and why. */
export function warnSkipped(...lines: string[]): void {
  const bar = '!'.repeat(78);
  process.stderr.write(`\n${bar}\n${lines.map((line) => `!!! ${line}\n`).join('')}${bar}\n`);
}
