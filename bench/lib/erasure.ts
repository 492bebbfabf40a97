// The erasure benchmark, on the database a replay (and its rebuild) just wrote:
//   erase one   `prequal-hooks erase --candidate <id>` for one candidate among every stored event,
//               beside two baselines of the same run: the CLI starting and exiting
//               (`--version`), and a scan of every stored body for the id (what an erasure
//               without the subject index would read);
//   retention   `prequal-hooks erase --inactive-for <age>` with the age that takes the 1,000
//               candidates heard of least recently.
import Database from 'better-sqlite3';
import { ROOT, distUrl } from './paths.js';
import { measureCommand } from './processes.js';
import type { CommandRun, ErasureResult } from './types.js';
// Not public: retention's own reading of a candidate's latest instant, from the dist under test.
type Retention = typeof import('../../dist/privacy/retention.js');

interface CliRun {
  cli: string;
  env: Record<string, string>;
}

async function cli(args: string[], { cli: path, env }: CliRun): Promise<CommandRun> {
  const run = await measureCommand(process.execPath, [path, ...args], { cwd: ROOT, env });
  if (run.code !== 0) throw new Error(`prequal-hooks ${args[0]} exited with ${run.code}:\n${run.stderr.slice(-3000)}`);
  return run;
}

/** The latest event instant (ms) of each candidate, read as retention reads it. */
async function latestInstants(db: Database.Database, env: Record<string, string>): Promise<number[]> {
  const { latestEventInstant } = (await import(distUrl('privacy/retention.js', env.BENCH_DIST))) as Retention;
  const latest: number[] = [];
  for (const row of db.prepare('SELECT field_versions FROM candidates').iterate() as IterableIterator<{ field_versions: string }>) {
    const at = latestEventInstant(row.field_versions);
    if (Number.isFinite(at)) latest.push(at);
  }
  return latest.sort((a, b) => a - b);
}

export async function benchErasure({
  db,
  cli: path,
  env,
  retention = 1000,
}: CliRun & { db: string; retention?: number }): Promise<ErasureResult> {
  const read = new Database(db, { readonly: true });
  const events = read.prepare('SELECT COUNT(*) FROM inbox').pluck().get() as number;
  const candidates = read.prepare('SELECT COUNT(*) FROM candidates').pluck().get() as number;
  const id = read
    .prepare('SELECT candidate_id FROM candidates ORDER BY candidate_id LIMIT 1 OFFSET ?')
    .pluck()
    .get(Math.floor(candidates / 2)) as string;
  // The naive erasure's read: every stored body searched for the id.
  const started = performance.now();
  const naiveMatches = read.prepare('SELECT COUNT(*) FROM inbox WHERE instr(raw, ?) > 0').pluck().get(Buffer.from(id)) as number;
  const naiveScanMs = performance.now() - started;
  const latest = await latestInstants(read, env);
  read.close();

  const start = await cli(['--version'], { cli: path, env });
  const one = await cli(['erase', '--db', db, '--candidate', id, '--reason', 'bench', '--json'], { cli: path, env });
  const report = JSON.parse(one.stdout) as { eventsRedacted: number };

  let inactive: ErasureResult['retention'] = null;
  if (latest.length > retention) {
    // Strictly older than the (retention+1)-th oldest latest instant: about `retention` candidates.
    const cutoff = latest[retention]!;
    const ageSec = Math.floor((Date.now() - cutoff) / 1000);
    const run = await cli(['erase', '--db', db, '--inactive-for', `${ageSec}s`, '--reason', 'bench retention', '--json'], {
      cli: path,
      env,
    });
    const r = JSON.parse(run.stdout) as { candidatesErased: number; eventsRedacted: number };
    inactive = {
      candidatesErased: r.candidatesErased,
      eventsRedacted: r.eventsRedacted,
      wallMs: Math.round(run.wallMs),
      maxRssMb: Math.round(run.maxRssKb / 1024),
    };
  }
  return {
    events,
    candidates,
    one: { eventsRedacted: report.eventsRedacted, wallMs: Math.round(one.wallMs), maxRssMb: Math.round(one.maxRssKb / 1024) },
    baselines: { cliStartMs: Math.round(start.wallMs), naiveScanMs: Math.round(naiveScanMs), naiveMatches },
    retention: inactive,
  };
}
