// Prometheus metrics of one receiver, in a registry of its own (two receivers in one process do
// not collide, and an app's own metrics stay in its registry). Counters are incremented where
// things happen, at the cost of an increment; gauges read the store at scrape time, bounded in
// time, so a scrape never hangs on a stalled database.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { isEventKind } from '../events/index.js';
import { prepareInboxQueries } from '../query/inbox.js';
import type { InboxPort } from '../store/ports/inbox.js';
import type { ChangesPort } from '../store/ports/changes.js';
import { destinationsOf } from '../destinations/sql.js';
import type { FeatureSql } from '../store/feature-sql.js';
import { destinationLag } from '../destinations/standing.js';
import { withDeadline } from '../deadline.js';
import { DEFAULT_ACCOUNT } from '../receive/account.js';

const PREFIX = 'prequal_hooks_';
const DESTINATION_DELIVERIES = `${PREFIX}destination_deliveries_total`;
const DESTINATION_ROUNDS = `${PREFIX}destination_rounds_total`;
const SCRAPE_TIMEOUT_MS = 2000;
const ACK_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 4, 5, 7.5, 10];

function within<T>(work: Promise<T>): Promise<T | undefined> {
  return withDeadline(
    work.catch(() => undefined),
    SCRAPE_TIMEOUT_MS,
    { unref: true },
  );
}

// prom-client's process defaults start timers and a GC observer that are never stopped: one set
// per process, merged into each receiver's registry, rather than one per receiver.
let processDefaults: Registry | undefined;

/**
 * prom-client's gauges named like counters (`promtool check metrics`: non-counter metrics should
 * not have a _total suffix). Each is the sum of the per-type gauge of the same name without
 * `_total`, which stays: `sum(prequal_hooks_nodejs_active_handles)`.
 */
const GAUGES_NAMED_LIKE_COUNTERS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

function processDefaultMetrics(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: PREFIX });
  for (const name of GAUGES_NAMED_LIKE_COUNTERS) registry.removeSingleMetric(`${PREFIX}${name}`);
  return registry;
}

/** The series counted where things happen. */
function countedSeries(own: Registry) {
  const requests = new Counter({
    name: `${PREFIX}requests_total`,
    help: 'Webhook requests answered, by account (none for a path that names no account), HTTP status and outcome (stored, duplicate, refused, busy, kept_invalid, unavailable, failed).',
    labelNames: ['account', 'status', 'outcome'] as const,
    registers: [own],
  });
  // The service waits 5 s for an answer, then counts a failure and retries: buckets dense around
  // that budget show how close answers come to it.
  const ack = new Histogram({
    name: `${PREFIX}webhook_ack_seconds`,
    help: 'Time from a webhook request arriving to its answer being written (the sender allows 5 s), by outcome.',
    labelNames: ['outcome'] as const,
    buckets: ACK_BUCKETS,
    registers: [own],
  });
  const events = new Counter({
    name: `${PREFIX}events_total`,
    help: 'Events processed by the dispatcher, by account, kind and final state (projected, unknown, dead).',
    labelNames: ['account', 'kind', 'state'] as const,
    registers: [own],
  });
  const lag = new Histogram({
    name: `${PREFIX}projection_lag_seconds`,
    help: 'Time from an event being stored to its projection being committed, by account.',
    labelNames: ['account'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [own],
  });
  const handlerCalls = new Counter({
    name: `${PREFIX}handler_calls_total`,
    help: 'Application handler calls, by handler and result (ok, failed, timeout).',
    labelNames: ['handler', 'result'] as const,
    registers: [own],
  });
  const erasures = new Counter({
    name: `${PREFIX}erasures_total`,
    help: 'Candidates erased (a request, or retention), by this process, by account.',
    labelNames: ['account', 'reason'] as const,
    registers: [own],
  });
  const redacted = new Counter({
    name: `${PREFIX}redacted_events_total`,
    help: 'Stored events redacted by erasures and retention, by this process, by account.',
    labelNames: ['account'] as const,
    registers: [own],
  });
  return { requests, ack, events, lag, handlerCalls, erasures, redacted };
}

/** What the gauges read: the inbox's counts, and the oldest pending row through the inbox queries. */
type GaugedStore = Pick<InboxPort, 'counts'> &
  Pick<ChangesPort, 'changesAfter'> &
  Parameters<typeof prepareInboxQueries>[0] & { forAccount(account: string): GaugedStore; readonly featureSql: FeatureSql };

/** The series read from the store at scrape time. */
function storeGauges(own: Registry, store: () => GaugedStore | undefined, accounts: () => readonly string[]): void {
  new Gauge({
    name: `${PREFIX}inbox_rows`,
    help: 'Inbox rows by account and state (pending is the backlog), and handler failures.',
    labelNames: ['account', 'state'] as const,
    registers: [own],
    async collect() {
      const current = store();
      const read = await Promise.all(
        accounts().map(async (account) => ({ account, counts: current && (await within(current.forAccount(account).counts())) })),
      );
      this.reset();
      for (const { account, counts } of read) if (counts) for (const [state, n] of Object.entries(counts)) this.set({ account, state }, n);
    },
  });
  new Gauge({
    name: `${PREFIX}backlog_age_seconds`,
    help: 'Age of the oldest pending inbox row (stored, not yet projected), by account; 0 when none is pending, NaN when the store did not answer.',
    labelNames: ['account'] as const,
    registers: [own],
    async collect() {
      const current = store();
      // Wrapped, so that none pending (0) is told apart from a store that did not answer: NaN
      // then (storage_up says why), never a false 0 that would silence an alert.
      const read = await Promise.all(
        accounts().map(async (account) => ({
          account,
          read:
            current &&
            (await within(
              prepareInboxQueries(current.forAccount(account))
                .oldestPending()
                .then((oldest) => ({ oldest })),
            )),
        })),
      );
      this.reset();
      for (const { account, read: r } of read)
        this.set({ account }, r === undefined ? Number.NaN : r.oldest === null ? 0 : Math.max(0, Date.now() - Date.parse(r.oldest)) / 1000);
    },
  });
  new Gauge({
    name: `${PREFIX}storage_up`,
    help: 'Whether the store answered a read at scrape time (1) or not (0).',
    registers: [own],
    async collect() {
      const current = store();
      this.set(current && (await within(current.counts())) !== undefined ? 1 : 0);
    },
  });
}

/** The destinations of the accounts shown, read at scrape time: how far behind each is, and its dead deliveries. */
function destinationGauges(own: Registry, store: () => GaugedStore | undefined, accounts: () => readonly string[]): void {
  // One read feeds both gauges of a scrape (prom-client collects them side by side): shared while it runs.
  let reading: ReturnType<typeof read> | undefined;
  const readOnce = () =>
    (reading ??= read().finally(() => {
      reading = undefined;
    }));
  const read = async (): Promise<Array<{ account: string; destination: string; seconds: number; dead: number }>> => {
    const current = store();
    if (current === undefined) return [];
    const shown = new Set(accounts());
    const destinations = destinationsOf(current);
    const records = ((await within(destinations.list())) ?? []).filter((r) => shown.has(r.account));
    const now = Date.now();
    const lags = await Promise.all(
      records.map((r) => within(destinationLag({ destinations, forAccount: (account) => current.forAccount(account) }, r, now))),
    );
    return records.flatMap((r, i) => {
      const lag = lags[i];
      return lag === undefined ? [] : [{ account: r.account, destination: r.destination, seconds: lag.oldestSeconds, dead: lag.dead }];
    });
  };
  new Gauge({
    name: `${PREFIX}destination_lag_seconds`,
    help: 'Age of the oldest change not yet delivered to a destination (queued, or not looked at yet; dead ones aside), by account and destination id; 0 when none is behind.',
    labelNames: ['account', 'destination'] as const,
    registers: [own],
    async collect() {
      const rows = await readOnce();
      this.reset();
      for (const r of rows) this.set({ account: r.account, destination: r.destination }, r.seconds);
    },
  });
  new Gauge({
    name: `${PREFIX}destination_dead_deliveries`,
    help: 'Deliveries set aside (dead: their retry schedule spent) by account and destination id, waiting for a retry (console or `destinations retry`).',
    labelNames: ['account', 'destination'] as const,
    registers: [own],
    async collect() {
      const rows = await readOnce();
      this.reset();
      for (const r of rows) this.set({ account: r.account, destination: r.destination }, r.dead);
    },
  });
}

/** A counter read from a running total at scrape time, by one label. */
function countedAtScrape(own: Registry, name: string, help: string, label: string, totals: () => Readonly<Record<string, number>>): void {
  const told: Record<string, number> = {};
  new Counter({
    name,
    help,
    labelNames: [label],
    registers: [own],
    collect() {
      for (const [value, count] of Object.entries(totals())) {
        const more = count - (told[value] ?? 0);
        if (more > 0 || told[value] === undefined) this.inc({ [label]: value }, more);
        told[value] = count;
      }
    },
  });
}

/** Who was refused or cut off for what the intake holds or spends: bodies cut off, addresses refused for their failures, contention. */
function intakeSeries(own: Registry, readings: IntakeReadings): void {
  countedAtScrape(
    own,
    `${PREFIX}bodies_cut_total`,
    'Request bodies cut off before their end: evicted (room made for another client, docs/security.md, "Limits") or too_slow (slower than --min-body-rate).',
    'reason',
    readings.cuts ?? (() => ({})),
  );
  countedAtScrape(
    own,
    `${PREFIX}rate_limited_total`,
    'Requests and connections refused 429 while requests contended, their client address over its budget of failed requests (docs/security.md, "Limits"), by where: connection (unread) or request.',
    'at',
    readings.rateLimited ?? (() => ({})),
  );
  new Gauge({
    name: `${PREFIX}intake_contended`,
    help: '1 while webhook requests contend for the event loop (it was late lately, or requests wait for their turn): addresses with failed requests are then served last or refused.',
    registers: [own],
    collect() {
      this.set(readings.contended?.() === true ? 1 : 0);
    },
  });
}

/** What the intake holds now: the bytes of request bodies read but not yet answered. */
function bufferedGauge(own: Registry, bufferedBytes: () => number): void {
  new Gauge({
    name: `${PREFIX}buffered_request_bytes`,
    help: 'Bytes of webhook request bodies held before their answer (claimed from the budget set by maxBufferedBytes; new bodies get 503 BUSY while it is full).',
    registers: [own],
    collect() {
      this.set(bufferedBytes());
    },
  });
}

/** What the metrics read of the intake and the receiver at scrape time. */
interface IntakeReadings {
  /** Bytes of bodies held now. */
  bufferedBytes?: () => number;
  /** The accounts the per-account gauges read. */
  accounts?: () => readonly string[];
  /** Bodies cut off so far, by reason. */
  cuts?: () => Readonly<Record<string, number>>;
  /** Refusals for an address's failures so far, by where: connection or request. */
  rateLimited?: () => Readonly<Record<string, number>>;
  /** Whether requests contend now. */
  contended?: () => boolean;
}

/**
 * The receiver's series. `accounts`: the accounts the per-account gauges read (the default one
 * alone unless the receiver routes to others); their cardinality is the number of accounts.
 */
export function createMetrics(store: () => GaugedStore | undefined, readings: IntakeReadings = {}) {
  const accounts = readings.accounts ?? (() => [DEFAULT_ACCOUNT]);
  processDefaults ??= processDefaultMetrics();
  const own = new Registry();
  const { requests, ack, events, lag, handlerCalls, erasures, redacted } = countedSeries(own);
  storeGauges(own, store, accounts);
  destinationGauges(own, store, accounts);
  new Counter({
    name: DESTINATION_DELIVERIES,
    help: 'Deliveries to HTTP destinations settled by this process, by account, destination (its id, never its URL) and outcome: delivered, failed (due again), dead (its schedule spent: set aside).',
    labelNames: ['account', 'destination', 'outcome'] as const,
    registers: [own],
  });
  new Counter({
    name: DESTINATION_ROUNDS,
    help: "Rounds of this process's destinations' delivery, each reading every destination afresh: flat while the receiver runs, its delivery is stuck.",
    registers: [own],
  });
  bufferedGauge(own, readings.bufferedBytes ?? (() => 0));
  intakeSeries(own, readings);

  // Before the merge: it copies the metrics registered so far.
  const secretUse = secretUseOf(own);
  const registry = Registry.merge([processDefaults, own]);
  return {
    registry,
    /** A webhook answered, `seconds` after it arrived. */
    request(account: string | undefined, status: number, outcome: string, seconds?: number): void {
      requests.inc({ account: account ?? '', status: String(status), outcome });
      if (seconds !== undefined) ack.observe({ outcome }, seconds);
    },
    ...secretUse,
    event(account: string, kind: string | null, state: string, receivedAt: string, processedAt: number): void {
      // Kinds this version does not know share one label: a sender cannot grow the series.
      events.inc({ account, kind: kind !== null && isEventKind(kind) ? kind : 'other', state });
      const stored = Date.parse(receivedAt);
      if (Number.isFinite(stored)) lag.observe({ account }, Math.max(0, processedAt - stored) / 1000);
    },
    handlerCall(handler: string, result: 'ok' | 'failed' | 'timeout'): void {
      handlerCalls.inc({ handler, result });
    },
    /** An erasure done: how many candidates and events. The reason is a label only as request or retention: operators' words are not. */
    erased(account: string, candidates: number, events: number, retention: boolean): void {
      if (candidates > 0) erasures.inc({ account, reason: retention ? 'retention' : 'request' }, candidates);
      if (events > 0) redacted.inc({ account }, events);
    },
  };
}

/**
 * Verified requests by the fingerprint of the secret that matched: during a rotation, the old
 * secret is unused once its count stops growing. Fingerprints are few (the configured secrets).
 */
function secretUseOf(own: Registry) {
  const verified = new Counter({
    name: `${PREFIX}verified_requests_total`,
    help: 'Webhook requests whose signature verified, by account and the fingerprint of the secret that matched (first 12 hex of its SHA-256): during a rotation, the old secret is unused once its count stops growing.',
    labelNames: ['account', 'secret'] as const,
    registers: [own],
  });
  return {
    /** A signature verified by the secret of this fingerprint. */
    verified(account: string, fingerprint: string): void {
      verified.inc({ account, secret: fingerprint });
    },
    /** Verified requests by secret fingerprint since this process started, most used first. */
    async verifiedBySecret(account: string): Promise<Array<{ fingerprint: string; requests: number }>> {
      const { values } = await verified.get();
      return values
        .filter((v) => v.labels.account === account)
        .map((v) => ({ fingerprint: String(v.labels.secret), requests: v.value }))
        .sort((a, b) => b.requests - a.requests);
    },
  };
}

/**
 * The destinations' counters in a receiver's registry (`receiver.metrics()`), as the delivery
 * loop's `onSettled` and `onRound`: serve runs the loop beside the receiver, whose registry holds them.
 */
export function destinationCountersOf(registry: Registry): {
  onSettled: (account: string, destination: string, outcome: 'delivered' | 'failed' | 'dead') => void;
  onRound: () => void;
} {
  const settled = registry.getSingleMetric(DESTINATION_DELIVERIES) as Counter<'account' | 'destination' | 'outcome'> | undefined;
  const rounds = registry.getSingleMetric(DESTINATION_ROUNDS) as Counter | undefined;
  return {
    onSettled: (account, destination, outcome) => settled?.inc({ account, destination, outcome }),
    onRound: () => rounds?.inc(),
  };
}
