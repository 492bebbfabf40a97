// The shapes the bench passes around and writes to bench/results/*.json, in one place.
import type { Buffer } from 'node:buffer';

// --- Processes -------------------------------------------------------------------------------

/** How to start a server under test (lib/processes.ts's startServer). */
export interface ServerCommand {
  name: string;
  command: string;
  args: string[];
  /** Node flags (e.g. --cpu-prof) put before the script. */
  nodeOptions?: string[];
  env?: Record<string, string>;
  /** Where its stdout and stderr go; its port is read from there. */
  logFile: string;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunningServer {
  name: string;
  pid: number;
  port: number;
  url: string;
  logFile: string;
  /** SIGTERM, then SIGKILL if it does not stop in time; resolves with how it exited. */
  stop(timeoutMs?: number): Promise<Exit>;
}

/** A one-shot command measured from outside (lib/processes.ts's measureCommand). */
export interface CommandRun {
  code: number | null;
  wallMs: number;
  maxRssKb: number;
  rssMethod: string;
  stdout: string;
  stderr: string;
}

// --- Load ------------------------------------------------------------------------------------

/** The headers a target expects: the service's, or GitHub's for @octokit/webhooks. */
export type HeaderStyle = 'service' | 'github';

/** One signed request of the pool. */
export interface PooledRequest {
  body: Buffer;
  signature: string;
  kind: string;
}

/** A round's cursor into the pool: shared by the runs that must never repeat an event. */
export interface Cursor {
  next: number;
}

/** What a round reports: 2xx per second and latency percentiles (ms). */
export interface RunSummary {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationSec: number;
}

/** Row counts by inbox state, e.g. `{ "processed": 1200 }`. */
type InboxCounts = Record<string, number>;

interface Durability {
  atEnd: InboxCounts;
  stored?: number;
  acknowledged?: number;
  everyAcknowledgedEventStored?: boolean;
}

/** One throughput round of one target. */
export interface ThroughputRound extends RunSummary {
  /** Bytes the server had written to storage per 2xx (durable targets, Linux). */
  diskBytesPerRequest?: number;
  /** CPU time the server process spent per 2xx, user and system (µs, Linux). */
  cpuUsPerRequest?: number;
  durability?: Durability;
}

export interface Distribution {
  count: number;
  p50?: number;
  p90?: number;
  p99?: number;
  max?: number;
}

// --- Targets ---------------------------------------------------------------------------------

export type TargetId = 'express-noop' | 'express-middleware' | 'serve' | 'serve-warn' | 'octokit' | 'node-http' | 'handwritten';

/** A throughput target: the real CLI (`cli`), or a bench server (`script`, compiled, under build/bench). */
export type Target = {
  id: TargetId;
  label: string;
  headers: HeaderStyle;
  /** Stores what it acknowledges: its inbox is checked after the round. */
  durable?: true;
  env?: Record<string, string>;
  /** Measured only when BENCH_ORDER names it, and absent from the results otherwise. */
  onDemand?: true;
} & ({ cli: true; cliArgs?: string[]; script?: never } | { script: string; cli?: never });

/** The median of a target's rounds, and the rounds. */
export interface TargetResult {
  label: string;
  requestsPerSec: number;
  p50Ms: number | null;
  p99Ms: number | null;
  non2xx: number;
  diskBytesPerRequest?: number | null;
  cpuUsPerRequest?: number | null;
  rounds: ThroughputRound[];
}

// --- Results file (bench/results/latest.json) -----------------------------------------------

export interface Settings {
  mode: 'quick' | 'full';
  connections: number;
  rounds: number;
  durationSec: number;
  warmupSec: number;
  replayEvents: number;
  replayDuplicates: number;
  replaySeed: number;
  lagDurationSec: number;
  lagWarmupSec: number;
  lagPollIntervalMs: number;
}

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGb: number;
  os: string;
  node: string;
  dataFilesystem: string | null;
  loadAverageAtStart: number[];
  loadAverageAtEnd?: number[];
  versions: Record<string, string | null>;
}

interface CodeInfo {
  commit: string | null;
  uncommittedFiles: number;
  distBuiltAt: string;
  distFingerprint: string;
  srcFingerprint: string;
}

/** What make-scenario.ts writes beside a scenario (`<file>.meta.json`). */
export interface ScenarioMeta {
  generatorVersion: number;
  events: number;
  distinct: number;
  duplicates: number;
  duplicatesReserialised: number;
  seed: number;
  bytes: number;
  kinds: Record<string, number>;
  campaigns: number;
  candidates: number;
  generatedInMs: number;
  generatorMaxRssMb: number;
}

export interface Scenario {
  file: string;
  meta: ScenarioMeta;
  cached: boolean;
  generation?: { wallMs: number; maxRssMb: number };
}

export interface RebuildResult {
  command: string;
  events: number;
  wallMs: number;
  eventsPerSec: number;
  maxRssMb: number;
  summary: unknown;
  costRatio?: number | null;
}

export interface ErasureResult {
  events: number;
  candidates: number;
  one: { eventsRedacted: number; wallMs: number; maxRssMb: number };
  baselines: { cliStartMs: number; naiveScanMs: number; naiveMatches: number };
  retention: { candidatesErased: number; eventsRedacted: number; wallMs: number; maxRssMb: number } | null;
}

export interface ReplayResult {
  command: string;
  events: number;
  wallMs: number;
  eventsPerSec: number;
  maxRssMb: number;
  rssMethod: string;
  /** The command's JSON summary, or its stdout when it printed none. */
  summary: unknown;
  stored: InboxCounts;
  candidates: number;
  campaigns: number;
  dbMb: number;
  progress?: { received: number; eventsPerSec: number }[];
  rebuild?: RebuildResult;
  erasure?: ErasureResult;
  costRatio?: number | null;
  measuredAt?: string;
}

export interface LagResult {
  ratePerSec: number;
  warmupSec: number;
  durationSec: number;
  sent: number;
  sendSeconds: number;
  acknowledged: number;
  failures: number;
  stored: number;
  neverSeen: number;
  pollIntervalMs: number;
  polls: number;
  /** 2xx -> projection visible to a reader (ms); resolution: the poll interval. */
  ackToProjected: Distribution;
  /** inbox.processed_at - inbox.received_at (ms, both written by the receiver). */
  receivedToProcessed: Distribution;
  /** The sender's request -> 2xx at this rate (ms). */
  ackLatency: Distribution;
  share?: number;
  maximum?: number;
  measuredAt?: string;
}

export interface LocksResult {
  lockSec: number;
  senders: number;
  webhooks: number;
  statuses: Record<string, number>;
  slowestAnswerMs: number;
  healthChecks: number;
  slowestHealthMs: number;
  longestStallMs: number | null;
  afterRelease: number[];
  pendingAfterRelease: number;
  everyAcknowledgedStored: boolean;
  measuredAt?: string;
}

export interface NeighbourRound {
  pingP99Ms: number;
  pingP50Ms: number;
  pings: number;
  webhooks: number;
  failures: number;
}

export interface NeighboursResult {
  ratePerSec: number;
  durationSec: number;
  rounds: { noop: NeighbourRound[]; middleware: NeighbourRound[] };
  noopPingP99Ms: number;
  middlewarePingP99Ms: number;
  ratio: number;
  measuredAt?: string;
}

export interface PostgresIngestRound {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /** The receivers' CPU a 2xx (µs, user + system, from /proc). */
  cpuUsPerRequest?: number;
  durability: { acknowledged: number; stored: number; everyAcknowledgedEventStored: boolean };
}

export interface PostgresIngest {
  processes: number;
  requestsPerSec: number;
  p50Ms: number | null;
  p99Ms: number | null;
  everyAcknowledgedEventStored: boolean;
  cpuUsPerRequest?: number | null;
  rounds: PostgresIngestRound[];
}

export interface PostgresReplay {
  events: number;
  wallMs: number;
  eventsPerSec: number;
  maxRssMb: number | null;
  stored: InboxCounts;
  candidates: number;
}

export interface PostgresResult {
  server: string;
  ingest: { handwritten?: PostgresIngest; serve1: PostgresIngest; serve2: PostgresIngest };
  replay: PostgresReplay;
  measuredAt?: string;
}

export interface ProfileRow {
  selfMs: number;
  selfPct: number;
  name: string;
}

export interface ProfileSummary {
  totalMs: number;
  topFunctions: ProfileRow[];
  topFiles: ProfileRow[];
}

export type ServerProfile =
  (ProfileSummary & { underProfile: { requestsPerSec: number; p99Ms: number }; file: string }) | { error: string };

export type ReplayProfile = ProfileSummary & { underProfile: { eventsPerSec: number }; file: string };

export interface Verdict {
  target: string;
  value: number | null;
  goal: string;
  pass: boolean | null;
  unit: string;
  verdict: 'PASS' | 'MISS' | 'n/a';
}

export interface BenchResults {
  date: string;
  settings: Settings;
  machine: MachineInfo;
  code: CodeInfo;
  pool?: { size: number; averageBytes: number; builtOnTheFly?: number };
  throughput?: Record<TargetId, TargetResult> & { measuredAt?: string };
  scenario?: Omit<Scenario, 'meta'> & ScenarioMeta;
  replay?: ReplayResult;
  replayBaseline?: { events: number; wallMs: number; eventsPerSec: number; maxRssMb: number; rebuild?: RebuildResult };
  replayBatched?: { events: number; wallMs: number; eventsPerSec: number; maxRssMb: number };
  lag?: LagResult;
  lag90?: LagResult;
  locks?: LocksResult;
  neighbours?: NeighboursResult;
  postgres?: PostgresResult;
  profiles?: Record<string, ServerProfile | ReplayProfile>;
  durations?: Record<string, number | null>;
  targets?: Verdict[];
  reruns?: { parts: string[]; date: string; durations: Record<string, number | null> | undefined; loadAverageAtStart: number[] }[];
}

// --- Tracing (bench/results/tracing.json) ----------------------------------------------------

/** absent: the package without @opentelemetry; off: installed, no OTEL_*; on: exporting. */
export type TracingTargetName = 'absent' | 'off' | 'on';

export interface TracingResults {
  date: string;
  machine: MachineInfo;
  requestsPerRound: number;
  rounds: number;
  connections: number;
  targets: {
    name: TracingTargetName;
    requestsPerSec: number | null;
    p50Ms: number | null;
    p99Ms: number | null;
    cpuUsPerRequest: number | null;
  }[];
  onOverOff: number | null;
  offOverAbsent: number | null;
  /** Requests a CPU-second, on ÷ off: the throughput ratio when the server, not the load, is the limit. */
  cpuOnOverOff: number | null;
  cpuOffOverAbsent: number | null;
  collector: { exports: number; bytes: number };
  failures: number;
}
