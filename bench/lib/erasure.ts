// The erasure benchmark (issue 23), on the database a replay (and its rebuild) just wrote:
//   erase one   `prequal-hooks erase --candidate <id>` for one candidate among every stored event,
//               beside two baselines of the same run: the CLI starting and exiting
//               (`--version`), and a scan of every stored body for the id (what an erasure
//               without the subject index would read);
//   retention   `prequal-hooks erase --inactive-for <age>` with the age that takes the 1,000
//               candidates heard of least recently.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { measureCommand } from './processes.js';

const ROOT = join(import.meta.dirname, '..', '..');

async function cli(args, { cli: path, env }) {
  const run = await measureCommand(process.execPath, [path, ...args], { cwd: ROOT, env });
  if (run.code !== 0) throw new Error(`prequal-hooks ${args[0]} exited with ${run.code}:\n${run.stderr.slice(-3000)}`);
  return run;
}

/** The latest event instant (ms) of each candidate, read as retention reads it. */
async function latestInstants(db, env) {
  const dist = env?.BENCH_DIST ?? join(ROOT, 'dist');
  const { latestEventInstant } = await import(pathToFileURL(join(dist, 'privacy', 'retention.js')).href);
  const latest = [];
  for (const row of db.prepare('SELECT field_versions FROM candidates').iterate()) {
    const at = latestEventInstant(row.field_versions);
    if (Number.isFinite(at)) latest.push(at);
  }
  return latest.sort((a, b) => a - b);
}

export async function benchErasure({ db, cli: path, env, retention = 1000 }) {
  const read = new Database(db, { readonly: true });
  const events = read.prepare('SELECT COUNT(*) FROM inbox').pluck().get();
  const candidates = read.prepare('SELECT COUNT(*) FROM candidates').pluck().get();
  const id = read.prepare('SELECT candidate_id FROM candidates ORDER BY candidate_id LIMIT 1 OFFSET ?').pluck().get(Math.floor(candidates / 2));
  // The naive erasure's read: every stored body searched for the id.
  let started = performance.now();
  const naiveMatches = read.prepare('SELECT COUNT(*) FROM inbox WHERE instr(raw, ?) > 0').pluck().get(Buffer.from(id));
  const naiveScanMs = performance.now() - started;
  const latest = await latestInstants(read, env);
  read.close();

  const start = await cli(['--version'], { cli: path, env });
  const one = await cli(['erase', '--db', db, '--candidate', id, '--reason', 'bench', '--json'], { cli: path, env });
  const report = JSON.parse(one.stdout);

  let inactive = null;
  if (latest.length > retention) {
    // Strictly older than the (retention+1)-th oldest latest instant: about `retention` candidates.
    const cutoff = latest[retention];
    const ageSec = Math.floor((Date.now() - cutoff) / 1000);
    const run = await cli(['erase', '--db', db, '--inactive-for', `${ageSec}s`, '--reason', 'bench retention', '--json'], { cli: path, env });
    const r = JSON.parse(run.stdout);
    inactive = { candidatesErased: r.candidatesErased, eventsRedacted: r.eventsRedacted, wallMs: Math.round(run.wallMs), maxRssMb: Math.round(run.maxRssKb / 1024) };
  }
  return {
    events,
    candidates,
    one: { eventsRedacted: report.eventsRedacted, wallMs: Math.round(one.wallMs), maxRssMb: Math.round(one.maxRssKb / 1024) },
    baselines: { cliStartMs: Math.round(start.wallMs), naiveScanMs: Math.round(naiveScanMs), naiveMatches },
    retention: inactive,
  };
}
