// What a command costs before its work: the CPU (user + system) of `prequal-hooks --version`,
// `--help`, and `inspect` of an empty SQLite database, each the median of several runs, beside the
// same for a bare `node -e 0` in the same run (what any Node program pays). The CPU is read by the
// child itself at exit (a preload writes process.cpuUsage() to a file), so the machine's other
// work does not count. Give BENCH_DIST=<an older dist/> to measure that build instead.
//
//   npm run bench:cli-start [-- --runs 15]
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { distUrl, TMP } from './lib/paths.js';
import { median, round } from './lib/stats.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '15' } } });
const runs = Number(values.runs);
const dir = join(TMP, 'cli-start');
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const usage = join(dir, 'usage.json');
const preload = join(dir, 'cpu-at-exit.mjs');
writeFileSync(
  preload,
  `import { writeFileSync } from 'node:fs';\nprocess.on('exit', () => { const { user, system } = process.cpuUsage(); writeFileSync(${JSON.stringify(usage)}, JSON.stringify((user + system) / 1000)); });\n`,
);
const cli = new URL(distUrl('cli/main.js')).pathname;
const database = join(dir, 'empty.db');

/** Median CPU milliseconds of `runs` runs of node with `args` (after one to warm the disk cache). */
function cpuMs(args: string[]): number {
  const times: number[] = [];
  for (let i = 0; i <= runs; i++) {
    rmSync(usage, { force: true });
    const child = spawnSync(process.execPath, ['--import', preload, ...args], { encoding: 'utf8' });
    if (child.status !== 0) throw new Error(`${args.join(' ')} exited ${String(child.status)}: ${child.stderr}`);
    if (i > 0) times.push(Number(readFileSync(usage, 'utf8')));
  }
  return round(median(times) ?? Number.NaN, 1) ?? Number.NaN;
}

const migrated = spawnSync(process.execPath, [cli, 'migrate', '--db', database], { encoding: 'utf8' });
if (migrated.status !== 0) throw new Error(`migrate failed: ${migrated.stderr}`);
const bare = cpuMs(['-e', '0']);
const result = {
  runs,
  bareNodeMs: bare,
  versionMs: cpuMs([cli, '--version']),
  helpMs: cpuMs([cli, '--help']),
  inspectEmptyMs: cpuMs([cli, 'inspect', '--db', database]),
  goalMs: 250,
};
console.log(JSON.stringify(result));
console.log(
  `CPU a command (median of ${runs}): --version ${result.versionMs} ms, --help ${result.helpMs} ms, inspect of an empty database ${result.inspectEmptyMs} ms; a bare node ${bare} ms (goal: ≤ ${result.goalMs} ms each)`,
);
rmSync(dir, { recursive: true, force: true });
