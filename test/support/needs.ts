// Tests that need a tool from outside npm (PostgreSQL, Chromium, promtool, caddy, nginx…). Where
// it is missing they say so loudly and are skipped; under CI=true they fail instead, naming the
// tool and how to install it: a CI run that tested less than it says must not pass.
import { existsSync } from 'node:fs';

/** Whether this run is CI's (CI=true or CI=1, as CI services set it). */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.CI === 'true' || env.CI === '1';
}

/** The first of `paths` that exists (unset or empty entries, such as an unset CHROMIUM_PATH, ignored). */
export function firstExisting(paths: Array<string | undefined>): string | undefined {
  return paths.find((path) => path !== undefined && path !== '' && existsSync(path));
}

/**
 * True when `found`. When not: under CI=true throws, which fails the test file (or the run, from a
 * global setup) with `tool` and `install` in the message; otherwise warns on stderr and returns
 * false, for `describe.skipIf(!needs(…))`. `untested` says what goes untested.
 */
export function needs(tool: string, found: boolean, { install, untested }: { install: string; untested: string }, env: NodeJS.ProcessEnv = process.env): boolean {
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
