#!/usr/bin/env node
// What delivering the changes to a destination (docs/destinations.md) costs and how fast it goes:
// `npm run bench:destinations` (builds, then node build/bench/destinations.js). This process runs
// the destination itself, in a thread of its own beside the load generator (bench/lib/
// destination-receiver.ts: a node:http server on loopback answering 204, recording when each change
// arrives) and three `prequal-hooks serve` on fresh SQLite files: "on" with one destination added
// by `prequal-hooks destinations add` before it starts, "off" with none, "outage" with one whose
// receiver answers 500 for --outage, then 204 again.
//  1. serve's maximum: a closed-loop burst of signed deliveries (--connections, --burst-seconds) on
//     "off"; the open-loop rate is half of it (--rate to set it instead).
//  2. --rounds of alternated phases on "on" and "off" (ABBA, to cancel drift), each --phase-seconds
//     at the rate (intake latency; on "on", the delay from intake's 2xx to the destination's
//     arrival for each change: an event's identity is computed as the project does, eventIdentity,
//     and the change names its events), then a closed-loop burst (intake throughput). Ratios on ÷ off.
//  3. "outage": a phase at the rate with the receiver answering 204 (the baseline), then --outage
//     with it answering 500 (intake latency meanwhile), then 204 again until every change is in. A
//     fast retry schedule (--retry-schedule on add) that outlasts the outage. Asserted: nothing lost
//     (every change serve recorded arrived at least once, deduped by webhook-id), order per entity
//     (each entity's seqs increase in arrival order), and no dead delivery.
// --profile runs "on" under node --cpu-prof (bench/tmp/destinations/profile).
// Results: a JSON line on stdout, bench/results/destinations[-<--label>].json.
//   smoke: node build/bench/destinations.js --warmup-seconds 1 --burst-seconds 1 --phase-seconds 2 --rounds 1 --outage 3s
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { removeDatabase } from './lib/database.js';
import { postSigned } from './lib/signed-post.js';
import type { Arrival, ReceiverCommand, ReceiverMessage } from './lib/destination-receiver.js';
import { gitInfo, machineInfo } from './lib/machine.js';
import { distModule, distUrl, RESULTS, ROOT, TMP as BENCH_TMP } from './lib/paths.js';
import { killLeftovers, startServer } from './lib/processes.js';
import { distribution, round } from './lib/stats.js';
import type { Distribution, RunningServer } from './lib/types.js';

const TMP = join(BENCH_TMP, 'destinations');
const SECRET = 'bench-secret-destinations-9a4d';
const { values: flags } = parseArgs({
  options: {
    rate: { type: 'string' },
    connections: { type: 'string', default: '16' },
    'burst-seconds': { type: 'string', default: '3' },
    'warmup-seconds': { type: 'string', default: '3' },
    'phase-seconds': { type: 'string', default: '10' },
    rounds: { type: 'string', default: '4' },
    entities: { type: 'string', default: '50' },
    outage: { type: 'string', default: '60s' },
    profile: { type: 'boolean', default: false },
    label: { type: 'string' },
  },
});

function seconds(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text);
  if (!m) throw new Error(`--outage ${text}: a duration, e.g. 60s, 500ms, 1m`);
  return Number(m[1]) * (m[2] === 'ms' ? 0.001 : m[2] === 'm' ? 60 : 1);
}

const settings = {
  connections: Number(flags.connections),
  burstSeconds: Number(flags['burst-seconds']),
  /** A closed-loop burst on each serve before anything is measured: a fresh process and file are slower at first. */
  warmupSeconds: Number(flags['warmup-seconds']),
  phaseSeconds: Number(flags['phase-seconds']),
  rounds: Number(flags.rounds),
  /** Candidates the events cycle through: each gets several changes, whose order is checked. */
  entities: Number(flags.entities),
  outageSeconds: seconds(flags.outage),
};
// Attempts at once, then quickly, then every `step` s: 50 attempts (the most add takes) outlast the outage by 30 s or more.
const step = Math.max(1, Math.ceil((settings.outageSeconds + 30) / 46));
const RETRY_SCHEDULE = ['0s', '100ms', '250ms', '500ms', ...Array<string>(46).fill(`${step}s`)].join(',');

const CLI = fileURLToPath(distUrl('cli/main.js'));
const { sign } = await distModule();
const { eventIdentity } = (await import(distUrl('events/index.js'))) as typeof import('../dist/events/index.js');

// --- The destination: the bench's receiver, in a thread of its own ------------------------------

/** What each path (one per serve) received, answered 2xx (`at` on this thread's performance.now() scale); and the requests answered 500. */
const arrivals = new Map<string, Arrival[]>();
let answered500 = 0;

/** Starts the receiver thread (bench/lib/destination-receiver.ts); its base URL, and how to make /outage fail and to stop it. */
async function startReceiver(): Promise<{ base: string; fail(failing: boolean): void; stop(): Promise<void> }> {
  const thread = new Worker(new URL('./lib/destination-receiver.js', import.meta.url));
  thread.on('message', (message: ReceiverMessage) => {
    if (message.type !== 'arrivals') return;
    answered500 = message.answered500;
    for (const arrival of message.arrivals) {
      const list = arrivals.get(arrival.path) ?? [];
      list.push({ ...arrival, at: arrival.at - performance.timeOrigin });
      arrivals.set(arrival.path, list);
    }
  });
  const port = await new Promise<number>((resolve, reject) => {
    thread.on('message', (message: ReceiverMessage) => message.type === 'listening' && resolve(message.port));
    thread.once('error', reject);
  });
  return {
    base: `http://127.0.0.1:${port}`,
    fail: (failing) => thread.postMessage({ type: 'failing', failing } satisfies ReceiverCommand),
    stop: async () => void (await thread.terminate()),
  };
}

// --- The intake: signed deliveries ------------------------------------------------------------

let counter = 0;
/** When intake answered 2xx to each event, by the event's identity. */
const intakeAt = new Map<string, number>();

interface Sent {
  status: number;
  ms: number;
}

/** One signed candidate.added: a candidate of the cycle, its name and timestamp new each time (a new change). */
async function deliver(url: string): Promise<Sent> {
  const n = counter++;
  const event = {
    event: 'candidate.added',
    timestamp: new Date(Date.UTC(2026, 10, 27, 10) + n * 1000).toISOString(),
    data: {
      campaign_id: 'cmp_bench_dest',
      candidate_id: `cand_dest_${n % settings.entities}`,
      first_name: 'Bench',
      last_name: `Dest ${n}`,
    },
  };
  const body = JSON.stringify(event);
  const { status, ms, endedAt } = await postSigned(`${url}/webhooks`, body, sign(SECRET, body), 10_000);
  if (status >= 200 && status < 300) intakeAt.set(eventIdentity(event), endedAt);
  return { status, ms };
}

/** Closed loop: `connections` loops, each sending the next as soon as the last is answered; 2xx a second. */
async function burst(url: string, secondsLong: number): Promise<number> {
  let ok = 0;
  const ends = performance.now() + secondsLong * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: settings.connections }, async () => {
      while (performance.now() < ends) if ((await deliver(url)).status < 300) ok++;
    }),
  );
  return ok / ((performance.now() - started) / 1000);
}

/** Open loop at `rate` a second for `secondsLong`: each answer's status and time. */
async function openLoop(url: string, rate: number, secondsLong: number): Promise<Sent[]> {
  const pending: Array<Promise<Sent>> = [];
  const started = performance.now();
  const total = Math.round(rate * secondsLong);
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await delay(wait);
    pending.push(deliver(url));
  }
  return await Promise.all(pending);
}

interface PhaseFigures {
  sent: number;
  ok: number;
  latencyMs: Distribution;
}

function figures(sent: Sent[]): PhaseFigures {
  const ok = sent.filter((s) => s.status >= 200 && s.status < 300);
  return { sent: sent.length, ok: ok.length, latencyMs: rounded(distribution(ok.map((s) => s.ms))) };
}

const rounded = (d: Distribution): Distribution => ({
  count: d.count,
  ...(d.count > 0 && { p50: round(d.p50, 1)!, p90: round(d.p90, 1)!, p99: round(d.p99, 1)!, max: round(d.max, 1)! }),
});

// --- serve --------------------------------------------------------------------------------------

interface Serve {
  server: RunningServer;
  db: string;
}

/** A fresh SQLite file, with a destination at `path` of the receiver when given, then serve on it. */
async function startServe(name: string, receiver: string | null, profile: boolean): Promise<Serve> {
  const db = join(TMP, `${name}.db`);
  removeDatabase(db);
  execFileSync(process.execPath, [CLI, 'migrate', '--db', db], { stdio: 'ignore' });
  if (receiver !== null)
    execFileSync(
      process.execPath,
      [CLI, 'destinations', 'add', '--db', db, '--url', receiver, '--retry-schedule', RETRY_SCHEDULE, '--json'],
      {
        stdio: 'ignore',
      },
    );
  const server = await startServer({
    name,
    command: process.execPath,
    args: [
      ...(profile ? ['--cpu-prof', '--cpu-prof-dir', join(TMP, 'profile')] : []),
      CLI,
      'serve',
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--db',
      db,
      '--secret',
      SECRET,
      '--log-level',
      'warn',
    ],
    logFile: join(TMP, `${name}.log`),
  });
  return { server, db };
}

/** The changes serve has recorded (read beside it), and its deliveries set aside as dead. */
function recorded(db: string): { seqs: Array<{ seq: number; entity: string; id: string }>; dead: number } {
  const file = new Database(db, { readonly: true, fileMustExist: true });
  try {
    const seqs = file.prepare("SELECT seq, entity, id FROM changes WHERE account = 'default' ORDER BY seq").all() as Array<{
      seq: number;
      entity: string;
      id: string;
    }>;
    const dead = file.prepare("SELECT COUNT(*) FROM destination_deliveries WHERE state = 'dead'").pluck().get() as number;
    return { seqs, dead };
  } finally {
    file.close();
  }
}

/** Waits until every change serve recorded has arrived at `path` (distinct seqs), up to `timeoutMs`. */
async function drained(serve: Serve, path: string, timeoutMs: number): Promise<boolean> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await delay(200)) {
    const got = new Set((arrivals.get(path) ?? []).map((a) => a.seq));
    if (recorded(serve.db).seqs.every((c) => got.has(c.seq))) return true;
  }
  return false;
}

/** Each change's delay: its arrival (the first, by webhook-id) less intake's 2xx of its latest event, for events sent after `from`. */
function changeDelays(path: string, from: number): number[] {
  const seen = new Set<string>();
  const delays: number[] = [];
  for (const a of arrivals.get(path) ?? []) {
    if (seen.has(a.webhookId)) continue;
    seen.add(a.webhookId);
    const times = a.events.map((e) => intakeAt.get(e)).filter((t): t is number => t !== undefined && t >= from);
    if (times.length > 0) delays.push(a.at - Math.max(...times));
  }
  return delays;
}

/** Nothing lost, order per entity, over what `path` received. */
function checkDelivery(serve: Serve, path: string) {
  const { seqs, dead } = recorded(serve.db);
  const byId = new Map<string, Arrival>();
  for (const a of arrivals.get(path) ?? []) if (!byId.has(a.webhookId)) byId.set(a.webhookId, a);
  const unique = [...byId.values()];
  const got = new Set(unique.map((a) => a.seq));
  const lost = seqs.filter((c) => !got.has(c.seq)).map((c) => c.seq);
  const lastSeq = new Map<string, number>();
  const outOfOrder: Array<{ entity: string; after: number; seq: number }> = [];
  for (const a of unique) {
    const key = `${a.entity}:${a.id}`;
    const last = lastSeq.get(key);
    if (last !== undefined && a.seq <= last) outOfOrder.push({ entity: key, after: last, seq: a.seq });
    lastSeq.set(key, Math.max(a.seq, last ?? 0));
  }
  return {
    changesRecorded: seqs.length,
    received: (arrivals.get(path) ?? []).length,
    receivedUnique: unique.length,
    repeats: (arrivals.get(path) ?? []).length - unique.length,
    entities: lastSeq.size,
    lost: lost.length,
    lostSeqs: lost.slice(0, 20),
    outOfOrder: outOfOrder.length,
    outOfOrderSample: outOfOrder.slice(0, 5),
    dead,
  };
}

// --- The run ------------------------------------------------------------------------------------

async function run() {
  rmSync(TMP, { recursive: true, force: true });
  mkdirSync(TMP, { recursive: true });
  mkdirSync(RESULTS, { recursive: true });
  const machine = machineInfo(ROOT, TMP);
  const receiver = await startReceiver();
  const { base } = receiver;
  const on = await startServe('on', `${base}/on`, flags.profile);
  const off = await startServe('off', null, false);
  try {
    for (const s of [on, off]) await burst(s.server.url, settings.warmupSeconds);
    const measuredMax = flags.rate === undefined ? await burst(off.server.url, settings.burstSeconds) : null;
    const rate = flags.rate === undefined ? Math.max(1, Math.floor(measuredMax! / 2)) : Number(flags.rate);
    console.error(`serve's max ${measuredMax === null ? '(not measured)' : `${Math.round(measuredMax)}/s`}; open loop at ${rate}/s`);
    await drained(on, '/on', 30_000);

    const latency = { on: [] as Sent[], off: [] as Sent[] };
    const throughput = { on: [] as number[], off: [] as number[] };
    const delays: number[] = [];
    const undrained: number[] = [];
    for (let r = 0; r < settings.rounds; r++) {
      for (const which of r % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        const serve = which === 'on' ? on : off;
        const from = performance.now();
        latency[which].push(...(await openLoop(serve.server.url, rate, settings.phaseSeconds)));
        if (which === 'on') {
          // The delays of the open loop's changes, before the burst queues more behind them.
          if (!(await drained(on, '/on', 30_000))) undrained.push(r);
          delays.push(...changeDelays('/on', from));
        }
        throughput[which].push(await burst(serve.server.url, settings.burstSeconds));
        if (which === 'on' && !(await drained(on, '/on', 60_000))) undrained.push(r);
      }
    }
    const onFigures = figures(latency.on);
    const offFigures = figures(latency.off);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const delivery = {
      delayMs: rounded(distribution(delays)),
      goalP99Ms: 250,
      intake: {
        on: { ...onFigures, burstPerSecond: throughput.on.map((x) => Math.round(x)) },
        off: { ...offFigures, burstPerSecond: throughput.off.map((x) => Math.round(x)) },
        throughputOnOverOff: round(mean(throughput.on) / mean(throughput.off), 2),
        p50OffOverOn: round(offFigures.latencyMs.p50! / onFigures.latencyMs.p50!, 2),
        p99OffOverOn: round(offFigures.latencyMs.p99! / onFigures.latencyMs.p99!, 2),
        goalRatio: 0.85,
      },
      check: checkDelivery(on, '/on'),
      ...(undrained.length > 0 && { undrainedRounds: undrained }),
    };
    await on.server.stop();
    await off.server.stop();

    // The outage.
    const outageServe = await startServe('outage', `${base}/outage`, false);
    let outage;
    try {
      await burst(outageServe.server.url, settings.warmupSeconds);
      await drained(outageServe, '/outage', 60_000);
      const baseline = figures(await openLoop(outageServe.server.url, rate, settings.phaseSeconds));
      receiver.fail(true);
      const startedAt = performance.now();
      const during = figures(await openLoop(outageServe.server.url, rate, settings.outageSeconds));
      receiver.fail(false);
      const recoveredAt = performance.now();
      const complete = await drained(outageServe, '/outage', 120_000 + step * 1000);
      const caughtUpMs = performance.now() - recoveredAt;
      outage = {
        outageSeconds: round((recoveredAt - startedAt) / 1000, 1),
        retrySchedule: RETRY_SCHEDULE.replace(/(,\d+s){46}$/, `,${step}s ×46`),
        answered500,
        intake: {
          baseline,
          during,
          p99DuringOverBaseline: round(during.latencyMs.p99! / baseline.latencyMs.p99!, 2),
        },
        caughtUpSecondsAfterRecovery: complete ? round(caughtUpMs / 1000, 1) : null,
        check: checkDelivery(outageServe, '/outage'),
      };
    } finally {
      await outageServe.server.stop();
    }
    const ok =
      delivery.check.lost === 0 &&
      delivery.check.outOfOrder === 0 &&
      outage.check.lost === 0 &&
      outage.check.outOfOrder === 0 &&
      outage.check.dead === 0;
    return {
      bench: 'destinations',
      machine,
      loadAverageAtEnd: os.loadavg().map((x) => Math.round(x * 100) / 100),
      git: gitInfo(ROOT),
      settings: { ...settings, profile: flags.profile, rate, measuredMaxPerSecond: measuredMax === null ? null : Math.round(measuredMax) },
      delivery,
      outage,
      assertions: {
        nothingLost: delivery.check.lost === 0 && outage.check.lost === 0,
        orderPerEntity: delivery.check.outOfOrder === 0 && outage.check.outOfOrder === 0,
        noDead: outage.check.dead === 0,
        ok,
      },
    };
  } finally {
    await on.server.stop();
    await off.server.stop();
    await receiver.stop();
  }
}

try {
  const result = await run();
  writeFileSync(join(RESULTS, `destinations${flags.label ? `-${flags.label}` : ''}.json`), `${JSON.stringify(result, null, 2)}\n`);
  const { delivery, outage, assertions } = result;
  console.log(
    `delay intake 2xx → destination: p50 ${delivery.delayMs.p50} ms, p99 ${delivery.delayMs.p99} ms (goal ≤ 250, ${delivery.delayMs.count} changes)\n` +
      `intake on ÷ off: throughput ${delivery.intake.throughputOnOverOff}, p50 off/on ${delivery.intake.p50OffOverOn}, p99 off/on ${delivery.intake.p99OffOverOn} (goal ≥ 0.85)\n` +
      `outage ${outage.outageSeconds} s: intake p99 ${outage.intake.during.latencyMs.p99} ms vs ${outage.intake.baseline.latencyMs.p99} ms without; ` +
      `lost ${outage.check.lost}, out of order ${outage.check.outOfOrder}, dead ${outage.check.dead}, repeats ${outage.check.repeats}, caught up ${outage.caughtUpSecondsAfterRecovery} s after recovery`,
  );
  console.log(JSON.stringify({ ...result, machine: undefined }));
  if (!assertions.ok) process.exitCode = 1;
} finally {
  killLeftovers();
}
