// Where the bench finds things. It runs compiled (build/bench/…), but its scratch files, results
// and scenario generator sources belong to the source tree: every path is made here, from the
// repository's root, so that no module works it out from its own compiled location.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The nearest folder above this module whose package.json is prequal-hooks' own. */
function repositoryRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'prequal-hooks') return dir;
    if (dirname(dir) === dir) throw new Error(`no prequal-hooks package.json above ${from}: run the bench from the repository`);
  }
}

const HERE = dirname(fileURLToPath(import.meta.url));

export const ROOT = repositoryRoot(HERE);
/** bench/ in the source tree: tmp/, results/, the generator's sources. */
export const BENCH = join(ROOT, 'bench');
/** The compiled bench (build/bench): what child processes run. */
const BENCH_BUILD = join(HERE, '..');
export const TMP = join(BENCH, 'tmp');
export const RESULTS = join(BENCH, 'results');

/** A compiled bench script to spawn, e.g. `servers/node-http.js`. */
export const benchScript = (relativePath: string): string => join(BENCH_BUILD, relativePath);

/**
 * The URL of a file of the package under test: the run's frozen copy of dist/ (BENCH_DIST, see
 * snapshot.ts) when a harness started this process, the repository's dist/ otherwise.
 */
export function distUrl(file: string, dist = process.env.BENCH_DIST): string {
  return pathToFileURL(join(dist ?? join(ROOT, 'dist'), file)).href;
}

/**
 * The package under test, typed as users see it (`prequal-hooks`), loaded from distUrl: by path,
 * because the frozen copy is not what the name `prequal-hooks` resolves to.
 */
export async function distModule(): Promise<typeof import('prequal-hooks')> {
  return (await import(distUrl('index.js'))) as typeof import('prequal-hooks');
}
