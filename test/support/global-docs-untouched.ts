// Vitest global setup: the run must leave docs/ as it found it. Tests once retook the README's
// screenshots there, so `npm test` rewrote tracked files; `npm run screenshots` does that now.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const DOCS = join(import.meta.dirname, '../../docs');

/** Each file under docs/ and the SHA-256 of its bytes (an empty map when there is no docs/). */
export function docsFingerprint(root = DOCS): Map<string, string> {
  const prints = new Map<string, string>();
  if (!existsSync(root)) return prints;
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    prints.set(relative(root, path), createHash('sha256').update(readFileSync(path)).digest('hex'));
  }
  return prints;
}

/** The files added, removed or rewritten between two fingerprints. */
export function changedFiles(before: Map<string, string>, after: Map<string, string>): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].filter((name) => before.get(name) !== after.get(name)).sort();
}

export default function setup() {
  const before = docsFingerprint();
  return () => {
    const changed = changedFiles(before, docsFingerprint());
    if (changed.length === 0) return;
    // Said and counted as a failure, not thrown: vitest reports a throw here yet exits 0.
    console.error(
      `\nFAIL: the tests changed docs/ (${changed.join(', ')}): tests must write screenshots and other output to a temporary folder. ` +
        "The README's screenshots are retaken by `npm run screenshots`.\n",
    );
    process.exitCode = 1;
  };
}
