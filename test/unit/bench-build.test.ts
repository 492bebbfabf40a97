// bench/ is TypeScript, compiled by tsconfig.bench.json: no untyped file comes back, the
// compiled bench stays out of the published dist/, and every script the harness spawns by its
// compiled name has a source that compiles to it (tsc checks imports, not these path strings).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const BENCH = join(ROOT, 'bench');
/** What runs write under bench/, not code. */
const GENERATED = new Set(['tmp', 'results']);

function benchFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return dir === BENCH && GENERATED.has(entry.name) ? [] : benchFiles(path);
    return [path];
  });
}

describe('bench/ build', () => {
  it('holds no JavaScript source outside its generated folders', () => {
    const untyped = benchFiles(BENCH)
      .filter((file) => /\.[cm]?jsx?$/.test(file))
      .map((file) => relative(ROOT, file));
    expect(untyped, 'write bench code in TypeScript (.ts): tsconfig.bench.json compiles it to build/bench').toEqual([]);
  });

  it('compiles to a folder that is neither published nor committed', () => {
    const config = JSON.parse(readFileSync(join(ROOT, 'tsconfig.bench.json'), 'utf8')) as {
      compilerOptions: { outDir: string; rootDir: string };
    };
    const outDir = config.compilerOptions.outDir.replace(/^\.\//, '').replace(/\/$/, '');
    expect(config.compilerOptions.rootDir).toBe('bench');
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[]; scripts: Record<string, string> };
    expect(manifest.files.some((published) => outDir === published || outDir.startsWith(`${published}/`))).toBe(false);
    const ignored = readFileSync(join(ROOT, '.gitignore'), 'utf8')
      .split('\n')
      .map((line) => line.trim().replace(/\/$/, ''));
    expect(ignored.some((pattern) => outDir === pattern || outDir.startsWith(`${pattern}/`))).toBe(true);
    expect(manifest.scripts.bench).toContain(`node ${outDir}/run.js`);
  });

  it('spawns only scripts that have a TypeScript source', () => {
    // The compiled names the harness spawns: benchScript('…js') and the targets' script: '…js'.
    const spawned = benchFiles(BENCH)
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
      .flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/(?:benchScript\(|script: )'([\w/.-]+)\.js'/g)].map((m) => m[1]!));
    expect(spawned.length).toBeGreaterThan(10);
    const missing = spawned.filter((name) => !existsSync(join(BENCH, `${name}.ts`)));
    expect(missing).toEqual([]);
  });
});
