// The dispatcher's second part: claims the rows whose handlers are due, each the first due row of
// its key (candidate, campaign or account), so that one key's handlers run one at a time, in inbox
// order, across processes; runs them (event-handlers.ts: each call retried by handler-retries.ts,
// within the slots and timeout of handler-calls.ts); then records them done or hands the claim back.
// Claims are renewed while their handlers run.
import type { Logger } from 'pino';
import { readEnvelope } from '../events/index.js';
import { readStored, type Processed } from '../project/batch.js';
import { createRowReaders } from '../project/read.js';
import { describeStorageError } from '../store/errors.js';
import type { AccountScope, Store } from '../store/store.js';
import type { HandlerClaimsPort } from '../store/write-ports.js';
import type { InboxRow } from '../store/rows.js';
import { createHandlerCalls, type HandlerCalls } from './handler-calls.js';
import { callHandlers, type AccountHandlerTarget, type EventHandlersContext } from './event-handlers.js';
import type { Tracing } from '../tracing/otel.js';
import type { HandlerRegistry } from './handlers.js';
import type { DispatchObserver, DispatchSettings } from './options.js';
import type { KeptReadings } from './kept-readings.js';

/** One account's view, as the pump uses it: that account's handler claims and its projected rows. */
type AccountHandlerView = HandlerClaimsPort & Pick<Store, 'projected'>;

export interface HandlerPumpContext {
  /** Its leases (any account's, by inbox id), and each account's claims and rows (`forAccount`). */
  store: HandlerClaimsPort & Pick<AccountScope, 'accountsWithWork'> & { forAccount(account: string): AccountHandlerView };
  handlers: HandlerRegistry;
  logger: Pick<Logger, 'warn' | 'error'>;
  observer?: DispatchObserver | undefined;
  now: () => number;
  /** Who claims: one id per process. */
  owner: string;
  /** Aborted when the dispatcher stops: no claim is taken after it, and running calls are abandoned. */
  stopping: AbortSignal;
  tracing?: Tracing | undefined;
  /** The events this process projected with handlers due, as projected: a row found there is not read again. */
  projected?: Pick<KeptReadings<Processed>, 'take'> | undefined;
}

export type HandlerPumpSettings = Pick<
  DispatchSettings,
  'handlerWindow' | 'handlerConcurrency' | 'handlerAttempts' | 'handlerRetryDelayMs' | 'handlerTimeoutMs' | 'handlerLeaseMs'
>;

/** What the pump's functions share. */
interface Pump {
  context: HandlerPumpContext;
  window: number;
  leaseMs: number;
  calls: HandlerCalls;
  eventHandlers: EventHandlersContext;
  /** The rows this process claimed and runs the handlers of. */
  running: Set<number>;
  /** What follows each row's handlers: recording them done, or handing the claim back. */
  finishingRows: Set<Promise<void>>;
  /** A claim loop runs; `again`: something asked for another round meanwhile. */
  pumping: boolean;
  again: boolean;
  idleWaiters: Array<() => void>;
  /** Which account the next claim round starts with: the accounts take turns to claim first. */
  turn: number;
}

/** Claims due rows while the window has room (coalesced: one claim loop at a time). */
function pumpHandlers(pump: Pump): void {
  if (pump.context.handlers.size === 0 || pump.context.stopping.aborted) return;
  if (pump.pumping) {
    pump.again = true;
    return;
  }
  pump.pumping = true;
  void claimWhileRoom(pump);
}

async function claimWhileRoom(pump: Pump): Promise<void> {
  const { stopping } = pump.context;
  try {
    do {
      pump.again = false;
      if (pump.running.size >= pump.window) break;
      // The window may take more, and keys may have moved on.
      if ((await claimRound(pump)) > 0) pump.again = true;
    } while (pump.again && !stopping.aborted);
  } catch (error) {
    pump.context.logger.warn({ code: describeStorageError(error).code }, 'could not claim handler work; will retry');
  } finally {
    pump.pumping = false;
    settleIdle(pump);
  }
}

/**
 * Claims due rows account by account, each taking its share of the window's room, starting with a
 * different account each round: a backlog of one account's handlers never keeps another's waiting
 * for more than a round. Returns how many rows it claimed.
 */
async function claimRound(pump: Pump): Promise<number> {
  const { store, owner } = pump.context;
  const accounts = (await store.accountsWithWork()).handlers;
  const start = accounts.length === 0 ? 0 : pump.turn++ % accounts.length;
  const turns = [...accounts.slice(start), ...accounts.slice(0, start)];
  let claimed = 0;
  for (let i = 0; i < turns.length; i++) {
    const room = pump.window - pump.running.size;
    if (room <= 0) break;
    const due = await store.forAccount(turns[i]!).claimHandlers({
      owner,
      limit: Math.ceil(room / (turns.length - i)),
      leaseMs: pump.leaseMs,
      running: pump.running,
    });
    for (const row of due) startHandlers(pump, row);
    claimed += due.length;
  }
  return claimed;
}

function startHandlers(pump: Pump, row: InboxRow): void {
  const { store, owner } = pump.context;
  const processed = pump.context.projected?.take(row) ?? readStored(row.raw, readEnvelope(row.raw, row.identity ?? undefined));
  pump.running.add(row.inbox_id);
  const run =
    processed.state === 'projected'
      ? callHandlers(pump.eventHandlers, {
          account: row.account,
          inboxId: row.inbox_id,
          identity: processed.identity,
          event: processed.event,
          traceContext: row.trace_context,
        })
      : Promise.resolve(true);
  const finishing = run
    .then(async (finished) => {
      // Stopped before the end: the claim is handed back, so the handlers run again at once
      // (at the next start, or in another process) rather than when the lease ends.
      if (finished) await store.handlersDone(row.inbox_id);
      else await store.releaseHandlers(owner, [row.inbox_id]);
    })
    .catch((error: unknown) => {
      // The mark stays set: the handlers run again once the lease ends (at least once).
      pump.context.logger.warn(
        { inboxId: row.inbox_id, code: describeStorageError(error).code },
        'could not record handlers as done; they will run again',
      );
    })
    .finally(() => {
      pump.running.delete(row.inbox_id);
      pump.finishingRows.delete(finishing);
      pumpHandlers(pump);
      settleIdle(pump);
    });
  pump.finishingRows.add(finishing);
}

function settleIdle(pump: Pump): void {
  if (pump.running.size > 0 || pump.pumping) return;
  for (const resolve of pump.idleWaiters.splice(0)) resolve();
}

function pumpOf(context: HandlerPumpContext, settings: HandlerPumpSettings): Pump {
  const calls = createHandlerCalls({
    concurrency: settings.handlerConcurrency,
    timeoutMs: settings.handlerTimeoutMs,
    stopping: context.stopping,
  });
  const { store, handlers, logger, observer, now, stopping } = context;
  const targets = new Map<string, AccountHandlerTarget>();
  const accountOf = (account: string): AccountHandlerTarget => {
    let target = targets.get(account);
    if (target === undefined) {
      const view = store.forAccount(account);
      target = { store: view, rows: createRowReaders(view) };
      targets.set(account, target);
    }
    return target;
  };
  const eventHandlers: EventHandlersContext = {
    accountOf,
    handlers,
    calls,
    logger,
    observer,
    now,
    stopping,
    tracing: context.tracing,
    attempts: settings.handlerAttempts,
    retryDelayMs: settings.handlerRetryDelayMs,
  };
  const running = new Set<number>();
  const finishingRows = new Set<Promise<void>>();
  return {
    context,
    window: settings.handlerWindow,
    leaseMs: settings.handlerLeaseMs,
    calls,
    eventHandlers,
    running,
    finishingRows,
    pumping: false,
    again: false,
    idleWaiters: [],
    turn: 0,
  };
}

export function createHandlerPump(context: HandlerPumpContext, settings: HandlerPumpSettings) {
  const pump = pumpOf(context, settings);
  const { store, owner, handlers } = context;
  const { running, window, leaseMs } = pump;
  const renewal = setInterval(
    () => {
      if (running.size > 0) void store.renewHandlerClaims(owner, [...running], leaseMs).catch(() => undefined);
    },
    Math.max(100, Math.floor(leaseMs / 3)),
  );
  renewal.unref();
  return {
    pump: (): void => pumpHandlers(pump),
    /**
     * Claims as many due rows as the window holds and starts their handlers; how many it claimed.
     * For a drain that found the pump idle: another key's turn may have come since.
     */
    async claimDue(): Promise<number> {
      return handlers.size === 0 ? 0 : await claimRound(pump);
    },
    /** Resolves once no handlers run and no claim is being taken. */
    whenIdle: (): Promise<void> =>
      new Promise<void>((resolve) => {
        pump.idleWaiters.push(resolve);
        settleIdle(pump);
      }),
    /** Whether the window is full, or as many calls as may run at once are stuck past their timeout. */
    saturated: (): boolean => running.size >= window || pump.calls.stuck() >= settings.handlerConcurrency,
    /** Handler calls abandoned at their timeout that have not settled since. */
    stuckCalls: (): number => pump.calls.stuck(),
    /** Stops renewing claims and lets whoever waits for idle go (stopping). */
    stop(): void {
      clearInterval(renewal);
      for (const resolve of pump.idleWaiters.splice(0)) resolve();
    },
    /** Resolves once no handler call holds a slot. */
    callsIdle: (): Promise<void> => pump.calls.onIdle(),
    /** Resolves once every row whose handlers ended is recorded done or handed back. */
    finishing: (): Promise<unknown> => Promise.all([...pump.finishingRows]),
    /** Hands back the claims of the rows still running, so that their handlers are due again at once. */
    releaseClaims: (): Promise<void> => store.releaseHandlers(owner, [...running]),
  };
}

export type HandlerPump = ReturnType<typeof createHandlerPump>;
