// The code under test, frozen for the length of a run. Others build into dist/ while a run goes
// on (npm test builds first), and a server started after such a build would measure other code
// than the one before it: so the run copies dist/ and migrations/ once, right after its own
// build, and every child (servers, CLI, replay) runs from that copy.
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface FrozenBuild {
  dir: string;
  dist: string;
  cli: string;
  distBuiltAt: string;
  distFingerprint: string;
  srcFingerprint: string;
}

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? e.path, e.name))
    .sort();
}

/** SHA-256 (12 hex) of the files' paths and contents: which code a result speaks for. */
function fingerprint(root: string, dirs: readonly string[]): string {
  const hash = createHash('sha256');
  for (const dir of dirs) {
    for (const file of files(join(root, dir))) hash.update(relative(root, file)).update('\0').update(readFileSync(file));
  }
  return hash.digest('hex').slice(0, 12);
}

export function snapshotBuild(root: string, into: string): FrozenBuild {
  mkdirSync(into, { recursive: true });
  for (const part of ['dist', 'migrations', 'fixtures', 'package.json']) cpSync(join(root, part), join(into, part), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(into, 'node_modules'), 'dir');
  return {
    dir: into,
    dist: join(into, 'dist'),
    cli: join(into, 'dist', 'cli', 'main.js'),
    distBuiltAt: statSync(join(root, 'dist', 'index.js')).mtime.toISOString(),
    distFingerprint: fingerprint(into, ['dist', 'migrations']),
    srcFingerprint: fingerprint(root, ['src', 'migrations']),
  };
}
