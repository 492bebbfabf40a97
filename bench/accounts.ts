#!/usr/bin/env node
// Fairness across accounts (docs/accounts.md, "Fairness"): `npm run bench:accounts` (about 1.5
// minutes; builds, then node build/bench/accounts.js; --backlog, --postgres-backlog, --probes,
// --probe-every-ms, --poll-ms, --engines sqlite,postgres, --handlers). A database holds a backlog
// of pending events in account A (100,000 on SQLite, 20,000 on PostgreSQL by default), stored as
// `replay --enqueue` stores them; a receiver (createReceiver, in this process) starts on it and
// drains it while probes, one every 100 ms, arrive through its intake (`receiver.receive`, signed,
// routed by route key). Each probe is timed from its 2xx to its row leaving `pending` (or, with
// --handlers, to the call of a no-op handler registered for every event). Figures, same run:
//   other account   probes to account B while A has the backlog (goal: p99 <= 1 s)
//   idle            the baseline: probes to a receiver with no backlog
//   same account    the behaviour with one account: probes to A, behind its own backlog (FIFO)
//   drain           how long A's backlog takes alone (first and last: the noise), with B's probes, with A's
// PostgreSQL is bench/lib/postgres.ts's server (skipped, said on stderr, when it cannot start).
// Results: a table on stdout, JSON in bench/results/accounts.json (accounts-handlers.json with --handlers).
//   BENCH_DIST=<another build's dist folder> node build/bench/accounts.js   (that version, for a before/after)
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import {
  candidateAdded,
  postgresEngine,
  SECRETS,
  sqliteEngine,
  storePorts,
  type Engine,
  type Route,
  type Template,
} from './lib/accounts.js';
import { gitInfo, machineInfo } from './lib/machine.js';
import { distModule, RESULTS, ROOT, TMP as BENCH_TMP } from './lib/paths.js';
import { distribution, round } from './lib/stats.js';
import type { Distribution } from './lib/types.js';

const TMP = join(BENCH_TMP, 'accounts');
const { values: flags } = parseArgs({
  options: {
    backlog: { type: 'string', default: '100000' },
    probes: { type: 'string', default: '50' },
    'probe-every-ms': { type: 'string', default: '100' },
    'poll-ms': { type: 'string', default: '2' },
    'postgres-backlog': { type: 'string', default: '20000' },
    engines: { type: 'string', default: 'sqlite,postgres' },
    handlers: { type: 'boolean', default: false },
  },
});
const settings = {
  backlog: Number(flags.backlog),
  /** Smaller on PostgreSQL, whose drains are slower, to keep the run within about 3 minutes. */
  postgresBacklog: Number(flags['postgres-backlog']),
  probes: Number(flags.probes),
  probeEveryMs: Number(flags['probe-every-ms']),
  pollMs: Number(flags['poll-ms']),
  engines: flags.engines.split(','),
  /** A no-op handler on every event, and each probe timed from its 2xx to its handler's call instead. */
  handlers: flags.handlers,
};
const pkg = await distModule();

// Warnings to stderr: stdout is the results table.
const logger = pkg.createLogger({ level: 'warn' }, process.stderr);

type Receiver = ReturnType<typeof pkg.createReceiver>;
type Store = ReturnType<typeof storePorts>;

interface ProbeTiming {
  /** 2xx -> the row no longer pending (ms). */
  ms: number;
  /** Whether the backlog was still being drained when the probe was acknowledged. */
  behindBacklog: boolean;
}

interface Drain {
  /** Set once the receiver's first drain has ended (ms since it started). */
  endedMs?: number;
}

/** A probe signed and received through the intake; when it was acknowledged, and its row. */
async function send(receiver: Receiver, route: Route, n: number): Promise<{ inboxId: number; acknowledged: number }> {
  const rawBody = Buffer.from(JSON.stringify(candidateAdded(0xb0 + n, n)));
  const request = {
    rawBody,
    headers: { 'content-type': 'application/json', 'x-service-signature': pkg.sign(route.secret, rawBody) },
    routeKey: route.routeKey,
  };
  let result = await receiver.receive(request);
  // The receiver reads the accounts' routes just after it opens: until then, 503 (the sender would retry).
  while (result.outcome === 'unavailable') {
    await delay(5);
    result = await receiver.receive(request);
  }
  const acknowledged = performance.now();
  if (result.answer.status >= 300 || result.inboxId === undefined) {
    throw new Error(`probe ${n} to ${route.account}: ${result.answer.status} ${result.outcome}`);
  }
  return { inboxId: result.inboxId, acknowledged };
}

interface Watched {
  inboxId: number;
  acknowledged: number;
  done: (ms: number) => void;
}

/**
 * Resolves with the time from each probe's 2xx to its row leaving `pending`, polling one row per
 * poll, the oldest: a case's probes all go to one account, whose rows are projected in arrival
 * order, so while the oldest is pending so are the others. (A poller per probe, 50 of them behind a
 * backlog, would load the very store they time: PostgreSQL's pool above all.)
 */
function probeWatcher(store: Store): (inboxId: number, acknowledged: number) => Promise<number> {
  const waiting: Watched[] = [];
  let polling = false;
  async function poll(): Promise<void> {
    polling = true;
    while (waiting.length > 0) {
      const oldest = waiting[0]!;
      const row = await store.inboxRow(oldest.inboxId);
      if (row !== undefined && row.state !== 'pending') {
        waiting.shift();
        oldest.done(performance.now() - oldest.acknowledged);
      } else await delay(settings.pollMs);
    }
    polling = false;
  }
  return (inboxId, acknowledged) =>
    new Promise<number>((done) => {
      waiting.push({ inboxId, acknowledged, done });
      waiting.sort((a, b) => a.inboxId - b.inboxId);
      if (!polling) void poll();
    });
}

/** With `--handlers`: a no-op handler on every event, resolving each probe's wait when its call starts. */
function handlerWatcher(receiver: Receiver): (inboxId: number, acknowledged: number) => Promise<number> {
  const called = new Map<number, number>();
  const waiting = new Map<number, (at: number) => void>();
  receiver.onAny((_event, { inboxId }) => {
    const at = performance.now();
    const done = waiting.get(inboxId);
    if (done === undefined) called.set(inboxId, at);
    else done(at);
  });
  return (inboxId, acknowledged) =>
    new Promise<number>((resolve) => {
      const at = called.get(inboxId);
      if (at !== undefined) resolve(at - acknowledged);
      else waiting.set(inboxId, (when) => resolve(when - acknowledged));
    });
}

interface CaseResult {
  /** From the receiver's start to the end of its first drain (the backlog, and the probes sent meanwhile). */
  drainMs: number;
  probes: ProbeTiming[];
}

/** A receiver on a copy of `template`, draining it while `route` gets a probe every probeEveryMs (none: no probes). */
async function runCase(engine: Engine, template: Template, name: string, route: Route | undefined): Promise<CaseResult> {
  const database = await engine.copy(template, name);
  const started = performance.now();
  const receiver = pkg.createReceiver({ ...database, secrets: [SECRETS.default], logger });
  const handled = settings.handlers ? handlerWatcher(receiver) : undefined;
  try {
    const store = storePorts(await receiver.store());
    const drain: Drain = {};
    const drained = receiver.drain().then(() => (drain.endedMs = performance.now() - started));
    const pending: Array<Promise<ProbeTiming>> = [];
    if (route !== undefined) {
      const watch = handled ?? probeWatcher(store);
      // One probe untimed first: the routes loaded, the intake's first request behind it.
      await send(receiver, route, settings.probes);
      for (let n = 0; n < settings.probes; n++) {
        const { inboxId, acknowledged } = await send(receiver, route, n);
        const behindBacklog = drain.endedMs === undefined;
        pending.push(watch(inboxId, acknowledged).then((ms) => ({ ms, behindBacklog })));
        await delay(settings.probeEveryMs);
      }
    }
    const probes = await Promise.all(pending);
    return { drainMs: await drained, probes };
  } finally {
    await receiver.close();
  }
}

type Probes = Distribution & { behindBacklog: number };

function summary(probes: readonly ProbeTiming[]): Probes {
  const d = distribution(probes.map((p) => p.ms));
  return {
    count: d.count,
    p50: round(d.p50) ?? undefined,
    p90: round(d.p90) ?? undefined,
    p99: round(d.p99) ?? undefined,
    max: round(d.max) ?? undefined,
    behindBacklog: probes.filter((p) => p.behindBacklog).length,
  };
}

const ratio = (a: number | undefined, b: number | undefined): number | null =>
  a === undefined || b === undefined || b === 0 ? null : round(a / b, 2);

interface EngineResult {
  engine: string;
  backlog: number;
  storedMs: number;
  accountsWithWorkMs: number;
  probes: { otherAccount: Probes; idle: Probes; sameAccount: Probes };
  /** The backlog drained alone twice (first and last: their spread is the noise), and with each kind of probe. */
  drainMs: { alone: number; aloneAgain: number; otherAccountProbes: number; sameAccountProbes: number };
  ratios: Record<string, number | null>;
}

/** Every case on one engine, in an order that brackets the probed drains between two unprobed ones. */
async function measure(engine: Engine): Promise<EngineResult> {
  const log = (message: string) => console.error(`${engine.name}: ${message}`);
  const backlog = engine.name === 'postgres' ? settings.postgresBacklog : settings.backlog;
  const idleTemplate = await engine.template('idle_template', 0);
  const template = await engine.template('backlog_template', backlog);
  log(`stored ${backlog} pending events in account a in ${Math.round(template.storedMs)} ms`);
  const idle = await runCase(engine, idleTemplate, 'idle', idleTemplate.routes.b);
  const alone = await runCase(engine, template, 'alone', undefined);
  log(`drained alone in ${Math.round(alone.drainMs)} ms`);
  const other = await runCase(engine, template, 'other_account', template.routes.b);
  log(`drained with account b's probes in ${Math.round(other.drainMs)} ms`);
  const same = await runCase(engine, template, 'same_account', template.routes.a);
  log(`drained with account a's probes in ${Math.round(same.drainMs)} ms`);
  const again = await runCase(engine, template, 'alone_again', undefined);
  log(`drained alone again in ${Math.round(again.drainMs)} ms`);
  const probes = { otherAccount: summary(other.probes), idle: summary(idle.probes), sameAccount: summary(same.probes) };
  const drainMs = {
    alone: Math.round(alone.drainMs),
    aloneAgain: Math.round(again.drainMs),
    otherAccountProbes: Math.round(other.drainMs),
    sameAccountProbes: Math.round(same.drainMs),
  };
  const aloneMean = (drainMs.alone + drainMs.aloneAgain) / 2;
  const ratios = {
    otherAccountP99OverIdle: ratio(probes.otherAccount.p99, probes.idle.p99),
    sameAccountP99OverOtherAccount: ratio(probes.sameAccount.p99, probes.otherAccount.p99),
    drainWithOtherAccountProbesOverAlone: ratio(drainMs.otherAccountProbes, aloneMean),
    drainWithSameAccountProbesOverAlone: ratio(drainMs.sameAccountProbes, aloneMean),
    drainAloneAgainOverAlone: ratio(drainMs.aloneAgain, drainMs.alone),
  };
  return {
    engine: engine.name,
    backlog,
    storedMs: Math.round(template.storedMs),
    accountsWithWorkMs: round(template.accountsWithWorkMs, 2) ?? 0,
    probes,
    drainMs,
    ratios,
  };
}

function report({ engine, backlog, accountsWithWorkMs, probes, drainMs, ratios }: EngineResult): void {
  const cell = (x: number | undefined) => String(x).padStart(9);
  const row = (label: string, d: Probes, note: string) =>
    `  ${label.padEnd(36)}${cell(d.p50)}${cell(d.p99)}${cell(d.max)}   ${d.behindBacklog}/${d.count} behind the backlog${note}`;
  console.log(
    `${engine}: ${backlog} events pending in account a; ${settings.probes} probes ${settings.probeEveryMs} ms apart; 2xx -> ${settings.handlers ? 'handler called' : 'projected'} (ms)`,
  );
  console.log(`  ${'probes'.padEnd(36)}${'p50'.padStart(9)}${'p99'.padStart(9)}${'max'.padStart(9)}`);
  console.log(row('to account b, a has the backlog', probes.otherAccount, '   (goal p99 <= 1000)'));
  console.log(row('to an idle receiver (baseline)', probes.idle, ''));
  console.log(row('to account a, behind its backlog', probes.sameAccount, '   (one account: FIFO)'));
  console.log(`  b's p99 / idle p99: ${ratios.otherAccountP99OverIdle}; a's p99 / b's p99: ${ratios.sameAccountP99OverOtherAccount}`);
  console.log(
    `  drain of a's backlog (ms): alone ${drainMs.alone} and ${drainMs.aloneAgain} (x${ratios.drainAloneAgainOverAlone}: the noise); ` +
      `with b's probes ${drainMs.otherAccountProbes} (x${ratios.drainWithOtherAccountProbesOverAlone}), with a's ${drainMs.sameAccountProbes} (x${ratios.drainWithSameAccountProbesOverAlone})`,
  );
  console.log(`  accountsWithWork() with the backlog pending: ${accountsWithWorkMs} ms (median of 20)`);
}

/** The engine named, or null when it cannot start here (PostgreSQL without binaries): said, and skipped. */
async function startEngine(name: string): Promise<(Engine & { version?: string }) | null> {
  if (name === 'sqlite') return sqliteEngine(TMP);
  if (name !== 'postgres') throw new Error(`unknown engine ${name}: sqlite or postgres`);
  try {
    return await postgresEngine(TMP, process.env.BENCH_DIST ?? join(ROOT, 'dist'));
  } catch (error) {
    console.error(`postgres: skipped, ${(error as Error).message}`);
    return null;
  }
}

rmSync(TMP, { recursive: true, force: true });
mkdirSync(TMP, { recursive: true });
const machine = machineInfo(ROOT, TMP);
const engines: Array<EngineResult & { server?: string }> = [];
for (const name of settings.engines) {
  const engine = await startEngine(name);
  if (engine === null) continue;
  try {
    engines.push({ ...(await measure(engine)), ...(engine.version !== undefined && { server: `PostgreSQL ${engine.version}` }) });
  } finally {
    await engine.stop();
  }
}
for (const result of engines) report(result);
machine.loadAverageAtEnd = os.loadavg().map((x) => Math.round(x * 100) / 100);
const results = { date: new Date().toISOString(), machine, git: gitInfo(ROOT), dist: process.env.BENCH_DIST ?? 'dist', settings, engines };
mkdirSync(RESULTS, { recursive: true });
writeFileSync(join(RESULTS, settings.handlers ? 'accounts-handlers.json' : 'accounts.json'), `${JSON.stringify(results, null, 2)}\n`);
rmSync(TMP, { recursive: true, force: true });
