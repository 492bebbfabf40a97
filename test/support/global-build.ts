// Vitest global setup: the end-to-end tests run dist/cli/main.js, so dist/ must be built from
// today's src/. `npm test` builds first, and this then finds dist/ current at the cost of a few
// hundred stats; `npx vitest` alone builds here (`npm run build`) when dist/ is stale, and again
// before a watch-mode rerun. Migrations and console assets are read from the package at run
// time, not built: only TypeScript sources count.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const mtime = (path: string): number | undefined => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
};

/** Why `root`'s dist/ is stale: the first source (or tsconfig) newer than its output, or an output missing; '' when current. */
export function staleReason(root: string): string {
  const configs = ['tsconfig.json', 'tsconfig.build.json'].map((name) => ({ name, at: mtime(join(root, name)) ?? 0 }));
  for (const source of sources(join(root, 'src'))) {
    const name = relative(root, source);
    const output = join('dist', relative(join(root, 'src'), source).replace(/\.ts$/, '.js'));
    const builtAt = mtime(join(root, output));
    if (builtAt === undefined) return `${output} is missing`;
    const newer = [{ name, at: mtime(source) ?? 0 }, ...configs].find((input) => input.at > builtAt);
    if (newer !== undefined) return `${newer.name} is newer than ${output}`;
  }
  return '';
}

function buildIfStale(): void {
  const reason = staleReason(ROOT);
  if (reason === '') return;
  process.stderr.write(`dist/ is stale (${reason}): npm run build\n`);
  if (spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' }).status === 0) return;
  // tsc writes its output despite type errors: dist/ then matches src/ (typecheck reports the errors).
  const still = staleReason(ROOT);
  if (still !== '') throw new Error(`\`npm run build\` failed and dist/ is still stale (${still}): the tests would run old code`);
  process.stderr.write('WARNING: `npm run build` reported errors (above) but wrote dist/ from the current src/: the tests run that.\n');
}

export default function setup(project: TestProject): void {
  buildIfStale();
  project.onTestsRerun(() => buildIfStale());
}
