// The application's onErase hooks: after every erasure (by this process, another one, the CLI or
// retention), each hook is called at least once with the erased candidate's id, so that the
// application erases its own copies. Every erasure owes its hooks a call in the erasure_hooks
// table until all of them succeeded; a process claims due erasures for a while, calls the hooks
// (each retried with a doubling delay, like handlers), and either deletes the debt or puts the
// next round off (a minute, doubling, at most an hour). A failed round keeps the error's class and
// code, never its message (it may name the person).
import type { Logger } from 'pino';
import { createHandlerCalls, HandlerTimeoutError } from '../dispatch/handler-calls.js';
import type { ErasureHookRow, Store } from '../store/store.js';

/** What an onErase hook is told: identifiers and the operator's reason, never an erased value. */
export interface ErasedCandidate {
  erasureId: number;
  candidateId: string;
  /** When the erasure ran (UTC, ISO 8601 with milliseconds). */
  erasedAt: string;
  reason: string;
}

export interface EraseHookContext {
  /** 1 on the first call of this round, then 2, 3 … on its retries. */
  attempt: number;
  /** Rounds that failed before this one (0 the first time). */
  round: number;
  /** Aborted at the hook's timeout or when the receiver stops. */
  signal: AbortSignal;
}

export type EraseHook = (erasure: ErasedCandidate, context: EraseHookContext) => unknown;

export interface ErasureHookOptions {
  /** The store once open (hooks can be registered before). */
  store: () => Store | undefined;
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

export function createErasureHooks(options: ErasureHookOptions) {
  const { logger, attempts, retryDelayMs } = options;
  const pollMs = options.pollMs ?? 30_000;
  const claimMs = Math.max(options.claimMs ?? 10 * 60_000, options.timeoutMs * attempts * 2);
  const roundDelayMs = options.roundDelayMs ?? 60_000;
  const maxRoundDelayMs = options.maxRoundDelayMs ?? 3_600_000;
  const now = options.now ?? Date.now;
  const hooks: Registered[] = [];
  const stopping = new AbortController();
  const calls = createHandlerCalls({ concurrency: 1, timeoutMs: options.timeoutMs, stopping: stopping.signal });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;

  const iso = (ms: number) => new Date(ms).toISOString();
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      stopping.signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
    });

  /** Every hook for one erasure, each retried; the first that gives up fails the round. */
  async function callAll(erasure: ErasureHookRow): Promise<unknown> {
    const told: ErasedCandidate = { erasureId: erasure.erasureId, candidateId: erasure.candidateId, erasedAt: erasure.erasedAt, reason: erasure.reason };
    for (const hook of hooks) {
      for (let attempt = 1; ; attempt++) {
        try {
          await calls.callOnce((signal) => hook.run({ ...told }, { attempt, round: erasure.rounds, signal }));
          options.onCall?.(hook.name, 'ok');
          break;
        } catch (error) {
          options.onCall?.(hook.name, error instanceof HandlerTimeoutError ? 'timeout' : 'failed');
          if (stopping.signal.aborted) return undefined;
          if (attempt >= attempts) return { hook: hook.name, error };
          await wait(retryDelayMs * 2 ** (attempt - 1));
          if (stopping.signal.aborted) return undefined;
        }
      }
    }
    return null;
  }

  async function settle(store: Store, erasure: ErasureHookRow): Promise<void> {
    const failure = (await callAll(erasure)) as { hook: string; error: unknown } | null | undefined;
    if (failure === undefined) {
      await store.write((tx) => tx.settleErasureHook(erasure.erasureId, { state: 'released' }));
    } else if (failure === null) {
      await store.write((tx) => tx.settleErasureHook(erasure.erasureId, { state: 'done' }));
    } else {
      const delayMs = Math.min(maxRoundDelayMs, roundDelayMs * 2 ** erasure.rounds);
      const error = `${failure.hook}: ${describe(failure.error)}`;
      await store.write((tx) => tx.settleErasureHook(erasure.erasureId, { state: 'failed', error, dueAt: iso(now() + delayMs) }));
      logger.error({ erasureId: erasure.erasureId, hook: failure.hook, error: describe(failure.error), round: erasure.rounds + 1, retryInMs: delayMs }, 'onErase hook failed; its round is retried later');
    }
  }

  async function runOnce(): Promise<void> {
    for (;;) {
      const store = options.store();
      if (stopping.signal.aborted || hooks.length === 0 || store === undefined) return;
      const at = now();
      const due = await store.write((tx) => tx.claimErasureHooks(iso(at), iso(at + claimMs), 8));
      if (due.length === 0) return;
      for (const erasure of due) {
        if (stopping.signal.aborted) {
          await store.write((tx) => tx.settleErasureHook(erasure.erasureId, { state: 'released' }));
          continue;
        }
        await settle(store, erasure);
      }
    }
  }

  /** Looks for due erasures now (coalesced with a look already running). */
  function kick(): void {
    if (hooks.length === 0 || stopping.signal.aborted) return;
    if (running !== undefined) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        await runOnce().catch((error: unknown) => logger.warn({ error: describe(error) }, 'erasure hooks: cannot read or settle their erasures now; trying again later'));
      } while (again && !stopping.signal.aborted);
    })().finally(() => {
      running = undefined;
    });
  }

  return {
    on(hook: EraseHook, hookOptions: { name?: string } = {}): void {
      hooks.push({ name: hookOptions.name ?? (hook.name && hook.name !== 'anonymous' ? `erase:${hook.name}` : `erase#${hooks.length + 1}`), run: hook });
      if (timer === undefined && !stopping.signal.aborted) {
        timer = setInterval(kick, pollMs);
        timer.unref();
      }
      kick();
    },
    kick,
    /** Resolves once no round is running (tests, and `receiver.drain()`). */
    async idle(): Promise<void> {
      while (running !== undefined) await running;
    },
    get size(): number {
      return hooks.length;
    },
    /** Stops looking; a round in progress gives its erasures back unrun (they stay owed). */
    async close(): Promise<void> {
      if (timer !== undefined) clearInterval(timer);
      stopping.abort();
      await running;
      await calls.onIdle();
    },
  };
}

export type ErasureHooks = ReturnType<typeof createErasureHooks>;
