import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { staleReason } from '../support/global-build.js';

describe('whether dist/ is built from the current src/ (the global setup builds when not)', () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });

  /** A package: its files written, each at the given second. */
  function tree(files: Record<string, number>): string {
    const root = mkdtempSync(join(tmpdir(), 'prequal-build-'));
    roots.push(root);
    for (const [name, at] of Object.entries(files)) {
      mkdirSync(join(root, name, '..'), { recursive: true });
      writeFileSync(join(root, name), '');
      utimesSync(join(root, name), at, at);
    }
    return root;
  }

  const built = {
    'tsconfig.json': 100,
    'tsconfig.build.json': 100,
    'src/index.ts': 200,
    'src/cli/main.ts': 200,
    'src/types.d.ts': 900,
    'dist/index.js': 300,
    'dist/cli/main.js': 300,
  };

  it('is current when every source has an output newer than it and than the tsconfigs (a .d.ts source has no output)', () => {
    expect(staleReason(tree(built))).toBe('');
    expect(staleReason(tree({ ...built, 'dist/cli/main.js': 200 }))).toBe('');
  });

  it('is stale when a source or a tsconfig changed after its output, or an output is missing', () => {
    expect(staleReason(tree({ ...built, 'src/cli/main.ts': 301 }))).toBe(
      `${join('src', 'cli', 'main.ts')} is newer than ${join('dist', 'cli', 'main.js')}`,
    );
    expect(staleReason(tree({ ...built, 'tsconfig.build.json': 400 }))).toMatch(/^tsconfig\.build\.json is newer than dist\//);
    expect(staleReason(tree({ ...built, 'src/new.ts': 250 }))).toBe(`${join('dist', 'new.js')} is missing`);
    const { 'dist/index.js': _gone, ...withoutIndex } = built;
    expect(staleReason(tree(withoutIndex))).toBe(`${join('dist', 'index.js')} is missing`);
  });
});
