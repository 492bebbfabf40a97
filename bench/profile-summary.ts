#!/usr/bin/env node
// Summarises a V8 .cpuprofile (node --cpu-prof): the top functions by self time, and by
// package/file, so a profile can be read in a terminal or pasted into a note.
//
//   node build/bench/profile-summary.js bench/tmp/profiles/serve-….cpuprofile [--top 25]
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { ProfileRow, ProfileSummary } from './lib/types.js';

/** The parts of a V8 .cpuprofile read here. */
interface CallFrame {
  functionName: string;
  url?: string;
  lineNumber: number;
}

interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame }[];
  samples: number[];
  timeDeltas: number[];
}

export function summariseProfile(path: string, top = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  // timeDeltas[i] is the time before sample i; attribute it to that sample's node.
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const cwd = process.cwd();
  const where = (cf: CallFrame): string => {
    let url = cf.url ?? '';
    if (url.startsWith('file://')) url = relative(cwd, new URL(url).pathname);
    // A run's frozen copy of the package (bench/lib/snapshot.ts) reads as the package itself.
    url = url.replace(/^bench\/tmp\/run-\d+\/code\//, '');
    return url === '' ? '' : `${url}:${cf.lineNumber + 1}`;
  };
  const frames = new Map<string, number>();
  const files = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const cf = byId.get(id)!.callFrame;
    const name = cf.functionName || (cf.url ? '(anonymous)' : '');
    const key = `${name || cf.url || '(program)'} ${where(cf)}`.trim();
    frames.set(key, (frames.get(key) ?? 0) + us);
    let file = cf.url ? where(cf).replace(/:\d+$/, '') : name;
    const nm = file.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
    if (nm) file = `[pkg] ${nm[1]!}`;
    else if (file.startsWith('node:')) file = `[node] ${file.split('/')[0]}`;
    files.set(file, (files.get(file) ?? 0) + us);
  }
  const rows = (map: Map<string, number>): ProfileRow[] =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ selfMs: Math.round(us / 1000), selfPct: Math.round((1000 * us) / total) / 10, name }));
  return { totalMs: Math.round(total / 1000), topFunctions: rows(frames), topFiles: rows(files) };
}

export function formatSummary(summary: ProfileSummary): string {
  const line = (r: ProfileRow): string => `${String(r.selfPct.toFixed(1)).padStart(5)}%  ${String(r.selfMs).padStart(6)} ms  ${r.name}`;
  return [
    `total sampled: ${summary.totalMs} ms`,
    'top self time (functions):',
    ...summary.topFunctions.map(line),
    'top self time (files / packages):',
    ...summary.topFiles.map(line),
  ].join('\n');
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const args = process.argv.slice(2);
  const topIndex = args.indexOf('--top');
  const top = topIndex >= 0 ? Number(args.splice(topIndex, 2)[1]) : 25;
  for (const path of args) {
    console.log(`# ${path}`);
    console.log(formatSummary(summariseProfile(path, top)));
  }
}
