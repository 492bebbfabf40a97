// No function in src/ is longer than 80 lines, unless it is listed below with its reason: one piece
// on purpose, or a room not split yet. A factory that holds every operation of its room in one
// closure is what this catches: a function's span includes the functions inside it.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const LIMIT = 80;

interface Allowed {
  /** Path from the repository root. */
  file: string;
  /** As this test names it: enclosing functions joined by dots, e.g. `createStore.write`. */
  name: string;
  /** Its length when it was listed: a ceiling (it may shrink, not grow). */
  lines: number;
  reason: string;
}

// Shrinks as the rooms are split. To split a closure, see docs/architecture.md, "Rooms that grew
// that grew". Remove an entry once its function is gone or under the limit: the test says so.
const ALLOWED: Allowed[] = [
  {
    file: 'src/events/canonical.ts',
    name: 'writeCanonically',
    lines: 90,
    reason:
      'one piece on purpose: its byte writers share one growing buffer and its length as local variables, and its explicit stack replaces recursion (no depth overflows); split, they would pass that state at every byte',
  },
  {
    file: 'src/events/json.ts',
    name: 'parseStrict',
    lines: 126,
    reason:
      "one piece on purpose: the intake's JSON reader (every request); its token readers share the cursor `i` as a local variable, which a split would turn into an object field read at every character",
  },
];

const ROOT = resolve(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.m?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

interface Measured {
  file: string;
  name: string;
  lines: number;
  line: number;
}

type FunctionNode = ts.FunctionLikeDeclaration;

const isFunction = (node: ts.Node): node is FunctionNode =>
  ts.isFunctionDeclaration(node) ||
  ts.isFunctionExpression(node) ||
  ts.isArrowFunction(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isConstructorDeclaration(node) ||
  ts.isGetAccessorDeclaration(node) ||
  ts.isSetAccessorDeclaration(node);

const textOf = (name: ts.PropertyName | ts.BindingName, source: ts.SourceFile): string =>
  ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name) || ts.isPrivateIdentifier(name)
    ? name.text
    : name.getText(source);

/** A function's own name, or the name it is given: `const f = () => …`, `{ f: () => … }`, `class { f = … }`. */
function ownName(node: FunctionNode, source: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name !== undefined) return textOf(node.name, source);
  const parent = node.parent;
  if (
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) &&
    parent.initializer === node
  ) {
    return textOf(parent.name, source);
  }
  if (ts.isExportAssignment(parent)) return 'default';
  return '(anonymous)';
}

/** Every function of one file with its span in lines, named through the functions around it. */
function measureFunctions(fileName: string, text: string): Measured[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const measured: Measured[] = [];
  const seen = new Map<string, number>();
  const visit = (node: ts.Node, outer: string[]): void => {
    if (!isFunction(node)) {
      ts.forEachChild(node, (child) => visit(child, outer));
      return;
    }
    const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
    const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
    const path = [...outer, ownName(node, source)].join('.');
    // Two functions of one name in one scope (two `close` of two objects): the second is `close#2`.
    const count = (seen.get(path) ?? 0) + 1;
    seen.set(path, count);
    const name = count === 1 ? path : `${path}#${count}`;
    measured.push({ file: fileName, name, lines: end - start + 1, line: start + 1 });
    ts.forEachChild(node, (child) => visit(child, [...outer, name]));
  };
  visit(source, []);
  return measured;
}

/** What is wrong with src/ against the allowlist, one sentence each, written for whoever must fix it. */
function lengthProblems(measured: readonly Measured[], allowed: readonly Allowed[]): string[] {
  const problems: string[] = [];
  const key = (file: string, name: string) => `${file} ${name}`;
  const byKey = new Map(measured.map((m) => [key(m.file, m.name), m]));
  const listed = new Map(allowed.map((a) => [key(a.file, a.name), a]));
  for (const m of measured) {
    if (m.lines <= LIMIT) continue;
    const entry = listed.get(key(m.file, m.name));
    if (entry === undefined) {
      problems.push(
        `${m.file}:${m.line} ${m.name} is ${m.lines} lines (limit ${LIMIT}). Split it into small plain functions ` +
          `(docs/architecture.md, "Rooms that grew"), or, if it must be one piece, add ` +
          `{ file: '${m.file}', name: '${m.name}', lines: ${m.lines}, reason: '…why…' } to ALLOWED in test/unit/function-length.test.ts.`,
      );
    } else if (m.lines > entry.lines) {
      problems.push(
        `${m.file}:${m.line} ${m.name} grew from ${entry.lines} to ${m.lines} lines. Move the new work into a function ` +
          `of its own, or, if it must stay inside, raise its lines in ALLOWED and say why in its reason.`,
      );
    }
  }
  for (const entry of allowed) {
    const m = byKey.get(key(entry.file, entry.name));
    if (m === undefined) {
      problems.push(
        `${entry.file} ${entry.name} is listed in ALLOWED but no longer exists: remove its entry (renamed? list the new name only if it is still over ${LIMIT} lines).`,
      );
    } else if (m.lines <= LIMIT) {
      problems.push(`${entry.file} ${entry.name} is now ${m.lines} lines, within the limit: remove its entry from ALLOWED.`);
    }
  }
  return problems;
}

describe(`functions in src/ are at most ${LIMIT} lines`, () => {
  it('or listed, with the reason they must be one piece', () => {
    const measured = sourceFiles(join(ROOT, 'src')).flatMap((path) => measureFunctions(relative(ROOT, path), readFileSync(path, 'utf8')));
    const problems = lengthProblems(measured, ALLOWED);
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('measures each function with the functions inside it, named through them, and says what to do', () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `    const x${i} = ${i};`).join('\n');
    const text = [
      'export function factory() {', // 95 lines: its own 3, and the 92 of `run` inside it
      '  const run = async () => {',
      lines(90),
      '  };',
      '  return { close() {}, stop: () => undefined };',
      '}',
      'export const reader = { close() {} };',
      'class Pump {',
      '  constructor() {}',
      '  get size() { return 1; }',
      '}',
      'setTimeout(() => {',
      lines(81),
      '});',
    ].join('\n');
    const measured = measureFunctions('src/x.ts', text);
    expect(measured.map((m) => [m.name, m.lines, m.line])).toEqual([
      ['factory', 95, 1],
      ['factory.run', 92, 2],
      ['factory.close', 1, 94],
      ['factory.stop', 1, 94],
      ['close', 1, 96],
      ['constructor', 1, 98],
      ['size', 1, 99],
      ['(anonymous)', 83, 101],
    ]);
    const allowed = (name: string, length: number) => ({ file: 'src/x.ts', name, lines: length, reason: 'test' });
    const problems = lengthProblems(measured, [
      allowed('factory', 90),
      allowed('(anonymous)', 83),
      allowed('size', 100),
      allowed('gone', 100),
    ]);
    expect(problems).toEqual([
      expect.stringMatching(/^src\/x\.ts:1 factory grew from 90 to 95 lines\. Move the new work into a function of its own/),
      expect.stringMatching(
        /^src\/x\.ts:2 factory\.run is 92 lines \(limit 80\)\. Split it .* add \{ file: 'src\/x\.ts', name: 'factory\.run', lines: 92, reason: '…why…' \} to ALLOWED/,
      ),
      'src/x.ts size is now 1 lines, within the limit: remove its entry from ALLOWED.',
      expect.stringMatching(/^src\/x\.ts gone is listed in ALLOWED but no longer exists: remove its entry/),
    ]);
  });
});
