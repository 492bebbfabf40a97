// Who is served first when the event loop is what clients contend for. Holding the receiver's
// resources (bytes, connections) is bounded by budget.ts and fair-share.ts; spending its CPU is
// bounded here: bad requests sent fast (tiny chunks, pipelined bad signatures, large bodies signed
// wrong) from other addresses must not take the real sender's 5-second budget away.
//
// An address's failures (requests refused before or by verification: a wrong or missing
// signature, an unknown path, a body too large, too slow or in too many pieces) are counted in a
// bucket, as HAProxy's http_err_rate stick tables and nginx's limit_req count per address:
// `failureBurst` failures at once, `failuresPerSecond` earned back, and one more earned back by
// each request that verifies (an address whose requests verify keeps its full share, even when
// some of them fail: the service sending to one account whose secret is wrong here).
//
// Two rules, only under contention — the event loop busy `contentionUtilization` of a quarter of a
// second or more within the last `contentionHoldMs` — and only while another address is active: an address alone (a load test, a proxy without --trust-proxy)
// is never refused or slowed.
// 1. An address over its budget (no failure left to spend) is refused at once: `429` with
//    `Retry-After` (the seconds until it has one again), at its connection before a byte is read
//    where the server lets us (serve: receiver.screenConnections), else at its request, unread.
// 2. Each address has `share` requests read and verified at once; its others wait, unread, and
//    are taken in order as its own finish: a heavy client cannot crowd out a light one.
import { performance } from 'node:perf_hooks';
import { ConfigurationError } from '../errors.js';
import { clientKey } from './client.js';

/** How contention is judged and how failures are counted (docs/security.md, "Limits"). */
export interface AdmissionRules {
  /** Failures an address may have at once before it is over its budget. Default 5. */
  failureBurst: number;
  /** Failures an address earns back each second (each request that verifies earns one more). Default 1. */
  failuresPerSecond: number;
  /**
   * The share of a quarter of a second the event loop spent working (its utilization, 0 to 1)
   * from which requests contend for it: new ones wait for it, first in the kernel's queue of
   * connections to accept. Default 0.9.
   */
  contentionUtilization: number;
  /** How long contention is held after the loop was last that busy (ms). Default 5000. */
  contentionHoldMs: number;
  /** Requests of one address read and verified at once under contention. Default 32. */
  share: number;
}

export const DEFAULT_ADMISSION_RULES: Readonly<AdmissionRules> = Object.freeze({
  failureBurst: 5,
  failuresPerSecond: 1,
  contentionUtilization: 0.9,
  contentionHoldMs: 5000,
  share: 32,
});

/** How a request ended, for its address's budget: refused before or by verification, verified, or neither (gone, busy). */
export type TurnEnd = 'failed' | 'verified' | 'other';

/** A request's turn: it may be read and verified; `leave` once it is answered. */
export interface Turn {
  readonly ok: true;
  leave(end: TurnEnd): void;
}

/** A request refused for its address's failures: answer 429 with this `Retry-After`. */
export interface Refusal {
  readonly ok: false;
  readonly retryAfterSeconds: number;
}

/** A request waiting for its turn; `cancel` when its client goes away (the turn is then undefined). */
interface Waiting {
  readonly turn: Promise<Turn | undefined>;
  cancel(): void;
}

export interface Admission {
  /** A request from `address` (the client's, '' when unknown) asks to be read and verified. */
  enter(address: string): Turn | Refusal | Waiting;
  /** A new connection from `address`: the seconds of a 429 to refuse it with, before a byte is read, or undefined to take it. */
  refusesConnection(address: string): number | undefined;
  /** A request refused before it could take a turn (an unknown path, a method not POST): a failure of its address. */
  failed(address: string): void;
  /** Refusals for an address's failures so far, at its connection (unread) or at a request. */
  refusals(): Readonly<Record<'connection' | 'request', number>>;
  /** Whether requests contend now. */
  contended(): boolean;
}

/** What is known of one address; forgotten once it is idle with every failure earned back. */
interface Client {
  readonly key: string;
  tokens: number;
  updatedAt: number;
  inProgress: number;
  /** Its requests waiting for a turn, oldest first. */
  readonly waiting: Array<(turn: Turn) => void>;
}

/** Addresses tracked at most; past it, new ones are not tracked (served as addresses without failures). */
const MAX_CLIENTS = 65_536;
/** How long an address counts as active after its last connection or request (ms). */
const ACTIVE_MS = 2000;
/** The window the loop's utilization is read over (ms). */
const WINDOW_MS = 250;

interface State {
  readonly rules: AdmissionRules;
  readonly now: () => number;
  readonly clients: Map<string, Client>;
  /** The addresses with requests waiting. */
  readonly waiting: Set<Client>;
  readonly refused: Record<'connection' | 'request', number>;
  /** The two addresses seen last (distinct), to tell whether another is active. */
  last: { key: string; at: number };
  previous: { key: string; at: number };
  /** The loop's utilization since the last call. */
  readonly utilization: () => number;
  windowAt: number;
  busyAt: number;
  timer: NodeJS.Timeout | undefined;
  sweptAt: number;
}

/** Where an admission reads the time and the loop's utilization (tests give their own). */
export interface AdmissionClock {
  /** Milliseconds, monotonic. Default `performance.now`. */
  now?: () => number;
  /** The event loop's utilization (0 to 1) since the last call. Default: Node's own counters. */
  utilization?: () => number;
}

export function createAdmission(rules: Partial<AdmissionRules> = {}, clock: AdmissionClock = {}): Admission {
  const now = clock.now ?? (() => performance.now());
  const at = now();
  const state: State = {
    rules: checked({ ...DEFAULT_ADMISSION_RULES, ...rules }),
    now,
    utilization: clock.utilization ?? loopUtilization(),
    clients: new Map(),
    waiting: new Set(),
    refused: { connection: 0, request: 0 },
    last: { key: '', at: -Infinity },
    previous: { key: '', at: -Infinity },
    windowAt: at,
    busyAt: -Infinity,
    timer: undefined,
    sweptAt: at,
  };
  return {
    enter: (address) => enter(state, clientKey(address)),
    refusesConnection(address) {
      const key = clientKey(address);
      const at = state.now();
      seen(state, key, at);
      const client = state.clients.get(key);
      if (client === undefined || !contended(state, key, at)) return undefined;
      refill(state, client, at);
      if (client.tokens >= 1) return undefined;
      state.refused.connection++;
      return retryAfter(state, client);
    },
    failed(address) {
      const at = state.now();
      const client = clientOf(state, clientKey(address), at);
      if (client !== undefined) settle(state, client, 'failed', at);
    },
    refusals: () => ({ ...state.refused }),
    contended: () => busy(state, state.now()),
  };
}

/** The rules, or a ConfigurationError naming the first that cannot work. */
function checked(rules: AdmissionRules): AdmissionRules {
  const positive = ['failureBurst', 'failuresPerSecond', 'contentionHoldMs', 'share'] as const;
  for (const name of positive) {
    if (!(Number.isFinite(rules[name]) && rules[name] > 0))
      throw new ConfigurationError(`admission.${name} must be a number above 0, got ${String(rules[name])}`);
  }
  if (!(rules.contentionUtilization > 0 && rules.contentionUtilization <= 1)) {
    throw new ConfigurationError(
      `admission.contentionUtilization must be above 0 and at most 1, got ${String(rules.contentionUtilization)}`,
    );
  }
  return rules;
}

function enter(state: State, key: string): Turn | Refusal | Waiting {
  const at = state.now();
  seen(state, key, at);
  const client = clientOf(state, key, at);
  if (client === undefined) return untracked;
  if (!contended(state, key, at)) return admit(state, client);
  refill(state, client, at);
  if (client.tokens < 1) {
    state.refused.request++;
    return { ok: false, retryAfterSeconds: retryAfter(state, client) };
  }
  if (client.waiting.length === 0 && client.inProgress < state.rules.share) return admit(state, client);
  let resolve!: (turn: Turn | undefined) => void;
  const turn = new Promise<Turn | undefined>((r) => (resolve = r));
  client.waiting.push(resolve);
  state.waiting.add(client);
  // Contention may end with nothing of this address finishing: looked at again every window.
  state.timer ??= setInterval(() => serveWaiting(state), WINDOW_MS).unref();
  return {
    turn,
    cancel() {
      const i = client.waiting.indexOf(resolve);
      if (i < 0) return;
      client.waiting.splice(i, 1);
      if (client.waiting.length === 0) state.waiting.delete(client);
      resolve(undefined);
    },
  };
}

/** The turn of an address not tracked (the table is full): served as one without failures. */
const untracked: Turn = { ok: true, leave: () => undefined };

function admit(state: State, client: Client): Turn {
  client.inProgress++;
  let left = false;
  return {
    ok: true,
    leave(end) {
      if (left) return;
      left = true;
      client.inProgress--;
      settle(state, client, end, state.now());
      if (client.waiting.length > 0) serveWaiting(state, client);
    },
  };
}

/** Gives turns to the requests waiting that may start now: `only` one address's, or every address's. */
function serveWaiting(state: State, only?: Client): void {
  const at = state.now();
  for (const client of only === undefined ? [...state.waiting] : [only]) {
    while (client.waiting.length > 0 && (client.inProgress < state.rules.share || !contended(state, client.key, at))) {
      client.waiting.shift()!(admit(state, client));
    }
    if (client.waiting.length === 0) state.waiting.delete(client);
  }
  if (state.waiting.size === 0 && state.timer !== undefined) {
    clearInterval(state.timer);
    state.timer = undefined;
  }
}

/** A request's end on its address's budget: a failure spends one, a verified request earns one back. */
function settle(state: State, client: Client, end: TurnEnd, at: number): void {
  if (end === 'other') return;
  refill(state, client, at);
  const { failureBurst } = state.rules;
  // Failures past the budget deepen it (the wait grows with them), down to one more burst.
  client.tokens = end === 'failed' ? Math.max(client.tokens - 1, -failureBurst) : Math.min(client.tokens + 1, failureBurst);
}

/** Whether `key`'s requests contend with others now: the loop was busy lately, and another address is active. */
function contended(state: State, key: string, at: number): boolean {
  return busy(state, at) && otherActive(state, key, at);
}

/**
 * Whether the event loop was busy for the rule's share of a window within the hold: read each
 * window from the counters Node keeps (no timer, no sampling). Busy, not late: a loop kept busy
 * by many short callbacks (reads of large bodies, accepts) is never late by much, yet the
 * connections waiting in the kernel's queue to be accepted wait behind all of them.
 */
function busy(state: State, at: number): boolean {
  if (at - state.windowAt >= WINDOW_MS) {
    if (state.utilization() >= state.rules.contentionUtilization) state.busyAt = at;
    state.windowAt = at;
  }
  return at - state.busyAt < state.rules.contentionHoldMs;
}

/** The event loop's utilization since the last call, from the counters Node keeps. */
function loopUtilization(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    return utilization;
  };
}

function seen(state: State, key: string, at: number): void {
  if (state.last.key === key) state.last.at = at;
  else {
    state.previous = state.last;
    state.last = { key, at };
  }
}

function otherActive(state: State, key: string, at: number): boolean {
  const other = state.last.key === key ? state.previous : state.last;
  return other.key !== key && at - other.at < ACTIVE_MS;
}

function clientOf(state: State, key: string, at: number): Client | undefined {
  const known = state.clients.get(key);
  if (known !== undefined) return known;
  // Every 10 s, or every second while the table is full (a sweep reads every address).
  if (at - state.sweptAt >= (state.clients.size >= MAX_CLIENTS ? 1000 : 10_000)) sweep(state, at);
  if (state.clients.size >= MAX_CLIENTS) return undefined;
  const client: Client = { key, tokens: state.rules.failureBurst, updatedAt: at, inProgress: 0, waiting: [] };
  state.clients.set(key, client);
  return client;
}

/** Forgets the addresses with nothing in progress or waiting and every failure earned back. */
function sweep(state: State, at: number): void {
  state.sweptAt = at;
  for (const [key, client] of state.clients) {
    refill(state, client, at);
    if (client.inProgress === 0 && client.waiting.length === 0 && client.tokens >= state.rules.failureBurst) state.clients.delete(key);
  }
}

function refill(state: State, client: Client, at: number): void {
  const earned = ((at - client.updatedAt) / 1000) * state.rules.failuresPerSecond;
  if (earned > 0) client.tokens = Math.min(state.rules.failureBurst, client.tokens + earned);
  client.updatedAt = Math.max(client.updatedAt, at);
}

/** Whole seconds until the address has a failure to spend again (at least 1). */
function retryAfter(state: State, client: Client): number {
  return Math.max(1, Math.ceil((1 - client.tokens) / state.rules.failuresPerSecond));
}
