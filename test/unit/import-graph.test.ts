// The imports of src/ run one way. Each folder (and each file at the top of src/) has a rank, in the
// order an event travels; a module imports only from its own folder and from folders of a lower
// rank, so a stage never reaches back up the pipeline. And no module imports, through any chain, a
// module that imports it back.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
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

/**
 * Each folder of src/ and each file at its top, with its rank. A module may import from its own
 * folder and from those of a lower rank: never from one of the same rank (folders side by side do
 * not know each other) or a higher one. docs/architecture.md describes them in this order.
 */
const RANKS: Readonly<Record<string, number>> = {
  // Under everything: they import nothing of ours (tracing/ is the optional OpenTelemetry seam).
  'errors.ts': 0,
  'deadline.ts': 0,
  'words.ts': 0,
  'repeat.ts': 0,
  'loopback.ts': 0,
  'threads.ts': 0,
  'signature.ts': 0,
  'tracing/': 0,
  'logging.ts': 1,
  // The pipeline, in the order an event travels.
  'events/': 1,
  // What the projection computes and the store keeps: the tables' rows and their changes, plain
  // types below both, so that the fold knows no store.
  'tables/': 1,
  'receive/': 2,
  'store/': 3,
  'project/': 4,
  'dispatch/': 5,
  'query/': 6,
  // What runs the same path again or reads it: replay and rebuild, erasure, accounts. The service's
  // REST contract and the helpers for users' tests sit here too, so that no stage of the pipeline
  // imports them.
  'replay/': 7,
  'privacy/': 7,
  'accounts/': 7,
  'api/': 7,
  'testing/': 7,
  // Built on those: the typed client and the sandbox of the service; the destinations, with their
  // SQL (their secrets are sealed under the accounts key).
  'client/': 8,
  'sandbox/': 8,
  'destinations/': 8,
  // Moving what a database holds: a copy to the other engine, a dump in the form replay reads.
  'transfer/': 8,
  // What reads all of it, destinations included: the metrics, the console; and reconciliation,
  // which calls the client.
  'metrics/': 9,
  'console/': 9,
  'reconcile/': 9,
  // What a user runs: the receiver, the standalone server, the commands and the public API.
  'receiver/': 10,
  'standalone/': 11,
  'cli/': 12,
  'index.ts': 12,
};

/** The unit a module belongs to: its folder under src/ (`store/` for src/store/sqlite/x.ts), or its own name at the top. */
function unitOf(file: string): string {
  const [first = '', ...rest] = relative(SRC, file).split(sep);
  return rest.length === 0 ? first : `${first}/`;
}

/** Each import that does not run down the ranks, as a sentence naming both files and the rule. */
function upwardImports(graph: ReadonlyMap<string, readonly string[]>, ranks: Readonly<Record<string, number>>): string[] {
  const found: string[] = [];
  for (const [file, targets] of graph) {
    const from = unitOf(file);
    const rank = ranks[from];
    for (const target of targets) {
      const to = unitOf(target);
      const targetRank = ranks[to];
      // A unit without a rank is the other test's to report.
      if (from === to || rank === undefined || targetRank === undefined || targetRank < rank) continue;
      found.push(
        `${relative(ROOT, file)} imports ${relative(ROOT, target)}: ${from} (rank ${rank}) may import only its own folder ` +
          `and ranks below ${rank}, and ${to} is rank ${targetRank}`,
      );
    }
  }
  return found.sort();
}

/** The graph of src/, read once for the tests that need it. */
let readGraph: Map<string, string[]> | undefined;
const srcGraph = () => (readGraph ??= importGraph(sourceFiles(SRC)));

describe('imports in src/', () => {
  it('every folder of src/ and every file at its top has a rank', () => {
    const units = readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() || /\.m?ts$/.test(entry.name))
      .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name));
    expect(
      units.filter((unit) => RANKS[unit] === undefined),
      'give each new folder or file a rank in RANKS (above what it imports, below what imports it) and a line in docs/architecture.md',
    ).toEqual([]);
    expect(
      Object.keys(RANKS).filter((unit) => !units.includes(unit)),
      'these have a rank but are no longer in src/: remove them from RANKS',
    ).toEqual([]);
  });

  it('run down the ranks: no stage imports from one beside it or after it', () => {
    const upward = upwardImports(srcGraph(), RANKS);
    expect(
      upward,
      'these imports run back up the pipeline. Move what the lower module needs down to a folder it may import ' +
        '(a type into the stage that makes it, for instance), rather than raising its rank:\n' +
        upward.join('\n'),
    ).toEqual([]);
  });

  it('the rank check names an import that runs up or sideways, and lets one within a folder or down through', () => {
    const at = (path: string) => join(SRC, path);
    const graph = new Map([
      [at('query/candidates.ts'), [at('query/errors.ts'), at('project/read.ts'), at('dispatch/handlers.ts')]],
      [at('store/sqlite/inbox.ts'), [at('store/store.ts'), at('receive/delivery.ts'), at('query/inbox.ts')]],
      [at('replay/replay.ts'), [at('privacy/erase.ts')]],
    ]);
    expect(upwardImports(graph, RANKS)).toEqual([
      'src/replay/replay.ts imports src/privacy/erase.ts: replay/ (rank 7) may import only its own folder and ranks below 7, and privacy/ is rank 7',
      'src/store/sqlite/inbox.ts imports src/query/inbox.ts: store/ (rank 3) may import only its own folder and ranks below 3, and query/ is rank 6',
    ]);
  });

  it('form no circle', () => {
    const cycles = importCycles(srcGraph());
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
