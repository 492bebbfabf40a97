// No module in src/ imports, through any chain, a module that imports it back: the folders read as
// the pipeline, and a reader can follow any import without coming round to where they started.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.m?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * Every relative module a file names: static imports and re-exports, `import type` included,
 * dynamic `import('./x.js')` and `typeof import('./x.js')`. A type-only import is erased at run
 * time, but it still ties the two modules: a reader has to open both, and a change to one reaches
 * the other. The one circle this test was written for (canonical.ts <-> parse.ts) was type-only.
 */
function importedSpecifiers(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument !== undefined && ts.isStringLiteralLike(argument)) found.push(argument.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found.filter((specifier) => specifier.startsWith('.'));
}

/** `./x.js` is the compiled name of `./x.ts` (NodeNext); files that are not code (assets) tie nothing. */
function resolveImport(from: string, specifier: string): string | undefined {
  const target = resolve(dirname(from), specifier);
  const source = target.replace(/\.js$/, '.ts').replace(/\.mjs$/, '.mts');
  if (existsSync(source) && source !== target) return source;
  if (/\.m?js$/.test(target)) throw new Error(`${relative(ROOT, from)} imports "${specifier}", but there is no ${relative(ROOT, source)}`);
  return undefined;
}

function importGraph(files: readonly string[]): Map<string, string[]> {
  return new Map(files.map((file) => [file, importedSpecifiers(file).flatMap((specifier) => resolveImport(file, specifier) ?? [])]));
}

/** One circle per strongly connected group of modules (Tarjan), each written a -> b -> … -> a. */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1 || (graph.get(node) ?? []).includes(node)) groups.push(group);
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return groups.map((group) => circleWithin(graph, new Set(group)));
}

/** A shortest way from the group's first module (by name) back to itself, staying in the group. */
function circleWithin(graph: ReadonlyMap<string, readonly string[]>, group: ReadonlySet<string>): string[] {
  const start = [...group].sort()[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!;
    for (const next of graph.get(node) ?? []) {
      if (!group.has(next)) continue;
      if (next === start) {
        const path = [start];
        for (let at: string | undefined = node; at !== start && at !== undefined; at = cameFrom.get(at)) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!cameFrom.has(next)) {
        cameFrom.set(next, node);
        queue.push(next);
      }
    }
  }
  return [...group, start];
}

describe('imports in src/', () => {
  it('form no circle', () => {
    const cycles = importCycles(importGraph(sourceFiles(SRC)));
    const named = cycles.map((cycle) => cycle.map((file) => relative(ROOT, file)).join(' -> '));
    expect(
      named,
      'these modules import each other (directly or through others). Move what they share into a ' +
        'module both can import (a type into its own file, for instance), so that imports run one way:\n' +
        named.join('\n'),
    ).toEqual([]);
  });

  it('the search finds a circle when there is one, and names it in order', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
    ]);
    expect(importCycles(graph)).toEqual([
      ['a', 'b', 'c', 'a'],
      ['e', 'e'],
    ]);
    expect(
      importCycles(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toEqual([]);
  });

  it('reads type-only, re-exported and dynamic imports as ties, and ignores packages and assets', () => {
    const dir = mkdtempSync(join(tmpdir(), 'import-cycles-'));
    try {
      const write = (name: string, text: string) => writeFileSync(join(dir, name), text);
      write('a.ts', "import type { B } from './b.js';\nimport { z } from 'zod';\nexport type A = B;\n");
      write('b.ts', "export * from './c.js';\nexport type B = typeof import('./d.js');\n");
      write('c.ts', "export const c = () => import('./a.js');\nconst css = new URL('./style.css', import.meta.url);\n");
      write('d.ts', 'export {};\n');
      const graph = importGraph(['a', 'b', 'c', 'd'].map((name) => join(dir, `${name}.ts`)));
      const names = (file: string) => (graph.get(join(dir, file)) ?? []).map((target) => relative(dir, target));
      expect([names('a.ts'), names('b.ts'), names('c.ts'), names('d.ts')]).toEqual([['b.ts'], ['c.ts', 'd.ts'], ['a.ts'], []]);
      expect(importCycles(graph).map((cycle) => cycle.map((file) => relative(dir, file)))).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
