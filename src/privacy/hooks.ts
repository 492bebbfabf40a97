// The application's onErase hooks: after every erasure (by this process, another one, the CLI or
// retention), each hook is called at least once with the erased candidate's id, so that the
// application erases its own copies. Every erasure owes its hooks a call in the erasure_hooks
// table until all of them succeeded; a process claims due erasures for a while, calls the hooks
// (each retried with a doubling delay, like handlers), and either deletes the debt or puts the
// next round off (a minute, doubling, at most an hour). A failed round keeps the error's class and
// code, never its message (it may name the person).
import type { Logger } from 'pino';
import { createHandlerCalls, type HandlerCalls } from '../dispatch/handler-calls.js';
import { callWithRetries } from '../dispatch/handler-retries.js';
import type { ErasureHookRow } from '../store/rows.js';
import type { ErasureTx, Transactions } from '../store/write-ports.js';

/** What an onErase hook is told: identifiers and the operator's reason, never an erased value. */
export interface ErasedCandidate {
  /** The erasure's id in the audit trail (`erasures`). */
  erasureId: number;
  /** The account the candidate was erased from (docs/accounts.md). */
  account: string;
  /** The candidate erased. */
  candidateId: string;
  /** When the erasure ran (UTC, ISO 8601 with milliseconds). */
  erasedAt: string;
  /** The reason recorded. */
  reason: string;
}

/** What an erase hook is told besides the erasure. */
export interface EraseHookContext {
  /** 1 on the first call of this round, then 2, 3 … on its retries. */
  attempt: number;
  /** Rounds that failed before this one (0 the first time). */
  round: number;
  /** Aborted at the hook's timeout or when the receiver stops. */
  signal: AbortSignal;
}

/** Called once per erased candidate after the erasure commits, to erase them elsewhere too; a rejection is retried. */
export type EraseHook = (erasure: ErasedCandidate, context: EraseHookContext) => unknown;

export interface ErasureHookOptions {
  /** The store once open (hooks can be registered before). */
  store: () => Transactions<ErasureTx> | undefined;
  logger: Pick<Logger, 'error' | 'warn'>;
  /** Calls of a failing hook in one round. */
  attempts: number;
  /** First retry delay within a round (ms), doubled at each attempt. */
  retryDelayMs: number;
  timeoutMs: number;
  /** How often due erasures are looked for (another process's, and failed rounds) (ms). */
  pollMs?: number;
  /** How long a claim lasts: a process that dies gives its erasures back then (ms). */
  claimMs?: number;
  /** The first round's delay after a failed one (ms), doubled each round, capped by `maxRoundDelayMs`. */
  roundDelayMs?: number;
  maxRoundDelayMs?: number;
  now?: () => number;
  onCall?: (hook: string, result: 'ok' | 'failed' | 'timeout') => void;
}

interface Registered {
  name: string;
  run: EraseHook;
}

/** An error's class and code: what a failed round keeps. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' || typeof code === 'number' ? `${error.name} (${code})` : error.name;
}

/** One receiver's hooks and the rounds that call them. */
interface Rounds {
  options: ErasureHookOptions;
  hooks: Registered[];
  claimMs: number;
  stopping: AbortController;
  calls: HandlerCalls;
  running: Promise<void> | undefined;
  /** A look was asked for while one ran: look again when it ends. */
  again: boolean;
  timer: NodeJS.Timeout | undefined;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Every hook for one erasure, each retried: null when all succeeded, the first that gave up, or
 * undefined when the receiver stopped meanwhile.
 */
async function callAll(rounds: Rounds, erasure: ErasureHookRow): Promise<{ hook: string; error: unknown } | null | undefined> {
  const { options, stopping } = rounds;
  const told: ErasedCandidate = {
    erasureId: erasure.erasureId,
    account: erasure.account,
    candidateId: erasure.candidateId,
    erasedAt: erasure.erasedAt,
    reason: erasure.reason,
  };
  for (const hook of rounds.hooks) {
    const result = await callWithRetries(
      (attempt) => rounds.calls.callOnce((signal) => hook.run({ ...told }, { attempt, round: erasure.rounds, signal })),
      {
        attempts: options.attempts,
        retryDelayMs: options.retryDelayMs,
        stopping: stopping.signal,
        onAttempt: (outcome) => options.onCall?.(hook.name, outcome),
      },
    );
    if (result.outcome === 'stopped') return undefined;
    if (result.outcome === 'failed') return { hook: hook.name, error: result.error };
  }
  return null;
}

/** One round for one erasure, and what it leaves owed. */
async function settle(rounds: Rounds, store: Transactions<ErasureTx>, erasure: ErasureHookRow): Promise<void> {
  const { options } = rounds;
  const failure = await callAll(rounds, erasure);
  if (failure === undefined) {
    await store.write((tx) => tx.settleErasureHook(erasure.erasureId, { state: 'released' }));
  } else if (failure === null) {
    await store.write((tx) => tx.settleErasureHook(erasure.erasureId, { state: 'done' }));
  } else {
    const delayMs = Math.min(options.maxRoundDelayMs ?? 3_600_000, (options.roundDelayMs ?? 60_000) * 2 ** erasure.rounds);
    const error = `${failure.hook}: ${describe(failure.error)}`;
    const now = (options.now ?? Date.now)();
    await store.write((tx) => tx.settleErasureHook(erasure.erasureId, { state: 'failed', error, dueAt: iso(now + delayMs) }));
    options.logger.error(
      { erasureId: erasure.erasureId, hook: failure.hook, error: describe(failure.error), round: erasure.rounds + 1, retryInMs: delayMs },
      'onErase hook failed; its round is retried later',
    );
  }
}

/** Claims what is due, a few at a time, until nothing is. */
async function runDue(rounds: Rounds): Promise<void> {
  for (;;) {
    const store = rounds.options.store();
    if (rounds.stopping.signal.aborted || rounds.hooks.length === 0 || store === undefined) return;
    const at = (rounds.options.now ?? Date.now)();
    const due = await store.write((tx) => tx.claimErasureHooks(iso(at), iso(at + rounds.claimMs), 8));
    if (due.length === 0) return;
    for (const erasure of due) {
      if (rounds.stopping.signal.aborted) await store.write((tx) => tx.settleErasureHook(erasure.erasureId, { state: 'released' }));
      else await settle(rounds, store, erasure);
    }
  }
}

/** Looks for due erasures now (coalesced with a look already running). */
function kick(rounds: Rounds): void {
  if (rounds.hooks.length === 0 || rounds.stopping.signal.aborted) return;
  if (rounds.running !== undefined) {
    rounds.again = true;
    return;
  }
  rounds.running = (async () => {
    do {
      rounds.again = false;
      await runDue(rounds).catch((error: unknown) =>
        rounds.options.logger.warn(
          { error: describe(error) },
          'erasure hooks: cannot read or settle their erasures now; trying again later',
        ),
      );
    } while (rounds.again && !rounds.stopping.signal.aborted);
  })().finally(() => {
    rounds.running = undefined;
  });
}

export function createErasureHooks(options: ErasureHookOptions) {
  const stopping = new AbortController();
  const rounds: Rounds = {
    options,
    hooks: [],
    claimMs: Math.max(options.claimMs ?? 10 * 60_000, options.timeoutMs * options.attempts * 2),
    stopping,
    calls: createHandlerCalls({ concurrency: 1, timeoutMs: options.timeoutMs, stopping: stopping.signal }),
    running: undefined,
    again: false,
    timer: undefined,
  };
  return {
    on(hook: EraseHook, hookOptions: { name?: string } = {}): void {
      const { hooks } = rounds;
      hooks.push({
        name: hookOptions.name ?? (hook.name && hook.name !== 'anonymous' ? `erase:${hook.name}` : `erase#${hooks.length + 1}`),
        run: hook,
      });
      if (rounds.timer === undefined && !stopping.signal.aborted) {
        rounds.timer = setInterval(() => kick(rounds), options.pollMs ?? 30_000);
        rounds.timer.unref();
      }
      kick(rounds);
    },
    kick: () => kick(rounds),
    /** Resolves once no round is running (tests, and `receiver.drain()`). */
    async idle(): Promise<void> {
      while (rounds.running !== undefined) await rounds.running;
    },
    get size(): number {
      return rounds.hooks.length;
    },
    /** Stops looking; a round in progress gives its erasures back unrun (they stay owed). */
    async close(): Promise<void> {
      if (rounds.timer !== undefined) clearInterval(rounds.timer);
      stopping.abort();
      await rounds.running;
      await rounds.calls.onIdle();
    },
  };
}

export type ErasureHooks = ReturnType<typeof createErasureHooks>;
