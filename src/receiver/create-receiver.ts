// createReceiver: the intake, the durable inbox behind it, the dispatcher, the projected state and
// its queries, wired from their modules (src/receiver/: options, lifecycle, api).
import type { EventKind } from '../events/index.js';
import { createHandlerRegistry } from '../dispatch/handlers.js';
import { createLogger, type Logger } from '../logging.js';
import type { Queries } from '../query/index.js';
import { replayInto, requireReadable } from '../replay/index.js';
import { reconcileInto } from '../reconcile/index.js';
import { createErasureHooks, eraseCandidate, eraseInactive, exportCandidate } from '../privacy/index.js';
import { dispatchSettings } from '../dispatch/options.js';
import type { ErasureTx, Transactions } from '../store/write-ports.js';
import { expressMiddleware } from '../receive/express.js';
import { fetchHandler } from '../receive/fetch.js';
import { ConfigurationError } from '../errors.js';
import { createIntake, type Intake } from '../receive/intake.js';
import { createBodyBudget, DEFAULT_MAX_BUFFERED_BYTES } from '../receive/budget.js';
import { createAdmission } from '../receive/admission.js';
import { screenConnections } from '../receive/connection-screen.js';
import { nodeHandler, type ResultListener } from '../receive/node-http.js';
import { createMetrics, destinationCountersOf } from '../metrics/prometheus.js';
import { activeTracing } from '../tracing/otel.js';
import { createDashboard } from '../console/dashboard.js';
import { isStore } from '../store/open.js';
import { HEARTBEAT_MS } from '../store/presence.js';
import type { AccountReceiver, Receiver } from './api.js';
import { createQueries, followChanges, readChanges } from '../query/index.js';
import { prepareDeadLetters, type DeadLetters } from '../dispatch/dead-letters.js';
import { DEFAULT_ACCOUNT, isAccountId } from '../receive/account.js';
import { UnknownAccountError } from '../accounts/errors.js';
import {
  abandon,
  closeReceiver,
  openReceiverStore,
  probeReceiver,
  runningOf,
  storeDelivery,
  whenOpen,
  type ReceiverState,
  type Running,
} from './lifecycle.js';
import type { ReceiverOptions } from './options.js';
import { mountedFeeds } from './feed-router.js';
import { backgroundSettings, startBackground } from './background.js';
import { storePorts } from '../store/store.js';

export type { Receiver, ReceiverOptions };

/**
 * Everything an agency backend needs: the intake (middleware, node:http and fetch handlers),
 * the durable inbox behind it, the dispatcher, the projected state and its queries, on SQLite
 * or PostgreSQL. SQLite opens at once (and throws here if it cannot); PostgreSQL opens in the
 * background, retried until it answers: until then webhooks get 503 and `ready()` waits.
 */
export function createReceiver(options: ReceiverOptions): Receiver {
  const state = receiverState(options);
  const intake = intakeOf(state);
  state.setRoutes = (routes) => intake.setAccounts(routes);
  // Reconciliation and retention go through the members, as a caller's would (metrics, hooks, the dispatcher).
  state.startBackground = (running) =>
    startBackground(state.background, {
      store: running.store,
      logger: state.logger,
      accounts: running.accounts?.accounts,
      intakeBusy: () => running.groupCommit.waiting() > 0,
      ...destinationCountersOf(state.metrics.registry),
      members: (account) => (account === DEFAULT_ACCOUNT ? receiver : receiver.forAccount(account)),
    });
  openReceiverStore(state);
  // Every answer is counted, then told to the caller's listener (access logs).
  const onRequest: ResultListener = (result, req, startedAt) => {
    state.metrics.request(result.account, result.answer.status, result.outcome, Number(process.hrtime.bigint() - startedAt) / 1e9);
    if (result.secretFingerprint !== undefined) state.metrics.verified(result.account ?? DEFAULT_ACCOUNT, result.secretFingerprint);
    options.onRequest?.(result, req, startedAt);
  };
  const use = () => whenOpen(state);
  // Replay and reconciliation mark handlers due only for kinds that have some.
  const wantsHandlers = (kind: EventKind) => state.handlers.for(kind).length > 0;
  const accounts = new Map<string, AccountReceiver>();
  // Ends the feed's followers when the receiver closes, rather than leaving them to fail on a closed store.
  const closing = new AbortController();
  const feeds = mountedFeeds({
    source: { forAccount: (account) => receiver.forAccount(account) },
    logger: state.logger,
    registry: async () => storePorts((await use()).store).registry,
  });
  const receiver: Receiver = {
    ready: async () => void (await (await use()).presence?.firstBeat),
    store: () => use().then((r) => r.store),
    accounts: () => use().then((r) => r.accounts?.accounts),
    receive: (request) => intake.receive(request),
    setSecrets: (secrets) => intake.setSecrets(secrets),
    secretUse: (account = DEFAULT_ACCOUNT) => state.metrics.verifiedBySecret(account),
    middleware: () => expressMiddleware(intake, onRequest),
    nodeHandler: (routing) => nodeHandler(intake, onRequest, routing?.routeKeyOf, routing?.clientOf),
    fetchHandler: (routing) => fetchHandler(intake, routing?.routeKeyOf),
    screenConnections: (server, screenOptions) => screenConnections(server, state.admission, screenOptions),
    on(kind, handler, handlerOptions) {
      state.handlers.on(kind, handler, handlerOptions);
      runningOf(state)?.dispatcher.start();
    },
    onAny(handler, handlerOptions) {
      state.handlers.onAny(handler, handlerOptions);
      runningOf(state)?.dispatcher.start();
    },
    onErase: (hook, hookOptions) => state.eraseHooks.on(hook, hookOptions),
    ...accountMembers(state, use, wantsHandlers, DEFAULT_ACCOUNT, closing.signal),
    forAccount(account) {
      if (!isAccountId(account)) throw new ConfigurationError(`"${account}" is not an account id: a slug of a-z, 0-9, - and _`);
      // Known at once from the routes the receiver keeps current; before their first reading, the members ask the registry.
      if (runningOf(state)?.accounts?.holds(account) === false) throw new UnknownAccountError(account);
      let members = accounts.get(account);
      if (members === undefined) accounts.set(account, (members = accountMembers(state, use, wantsHandlers, account, closing.signal)));
      return members;
    },
    metrics: () => state.metrics.registry,
    dashboard: (dashboardOptions) => createDashboard(receiver, { logger: state.logger, ...dashboardOptions }),
    feed: (feedOptions = {}) => feeds.router(feedOptions),
    async drain() {
      await (await use()).dispatcher.drain();
      await state.eraseHooks.idle();
    },
    saturated: () => runningOf(state)?.dispatcher.saturated() ?? false,
    intakeBusy: () => (runningOf(state)?.groupCommit.waiting() ?? 0) > 0,
    stuckHandlerCalls: () => runningOf(state)?.dispatcher.stuckHandlerCalls() ?? 0,
    probe: () => probeReceiver(state),
    close: (timeoutMs = 5000) => {
      closing.abort();
      feeds.close();
      return closeReceiver(state, timeoutMs);
    },
  };
  return receiver;
}

/** What the receiver does for one account: its queries, dead letters, replay, reconciliation, erasure and export. */
function accountMembers(
  state: ReceiverState,
  use: () => Promise<Running>,
  wantsHandlers: (kind: EventKind) => boolean,
  account: string,
  closing: AbortSignal,
): AccountReceiver {
  // An account the routes do not hold (not read yet, added elsewhere since, or no watch with
  // `accounts: false`) is looked up in the registry itself: nothing is read or written for an unknown one.
  const registered = async () => {
    const r = await use();
    if (
      account !== DEFAULT_ACCOUNT &&
      r.accounts?.holds(account) !== true &&
      !(await r.store.registry.snapshot()).accounts.some((a) => a.account === account)
    )
      throw new UnknownAccountError(account);
    return r;
  };
  const scoped = async () => {
    const r = await registered();
    return { ...r, store: r.store.forAccount(account) };
  };
  // The default account's are made with the store; another's once, when first asked for.
  let own: { queries: Queries; deadLetters: DeadLetters } | undefined;
  const ownOf = async () => {
    if (account === DEFAULT_ACCOUNT) return await use();
    const r = await registered();
    own ??= {
      queries: createQueries(r.store.forAccount(account)),
      deadLetters: prepareDeadLetters(r.store.forAccount(account), () => r.dispatcher.start()),
    };
    return own;
  };
  return {
    account,
    query: waitingQueries(ownOf),
    deadLetters: {
      list: async (limit) => (await ownOf()).deadLetters.list(limit),
      reprocess: async (ids) => (await ownOf()).deadLetters.reprocess(ids),
      retryHandlers: async (ids) => (await ownOf()).deadLetters.retryHandlers(ids),
    },
    async replay(inputs, replayOptions) {
      const r = await scoped();
      const summary = await replayInto({ store: r.store, wantsHandlers }, inputs, { bulk: false, ...replayOptions });
      r.dispatcher.start();
      return requireReadable(summary);
    },
    async reconcile(reconcileOptions) {
      const r = await scoped();
      const report = await reconcileInto({ store: r.store, wantsHandlers }, reconcileOptions);
      if (report.written > 0) r.dispatcher.start();
      return report;
    },
    async erase(match, eraseOptions) {
      const report = await eraseCandidate((await scoped()).store, match, eraseOptions);
      if (report.dryRun) return report;
      state.metrics.erased(account, report.candidateIds.length, report.eventsRedacted, false);
      state.eraseHooks.kick();
      return report;
    },
    async eraseInactive(retentionOptions) {
      const report = await eraseInactive((await scoped()).store, retentionOptions);
      if (!report.dryRun) state.metrics.erased(account, report.candidatesErased, report.eventsRedacted + report.setAsideRedacted, true);
      state.eraseHooks.kick();
      return report;
    },
    exportCandidate: async (candidateId) => exportCandidate((await scoped()).store, candidateId),
    counts: async () => (await scoped()).store.counts(),
    changes: async function* (options) {
      const signal = options?.signal === undefined ? closing : AbortSignal.any([options.signal, closing]);
      yield* followChanges((await scoped()).store, { ...options, signal });
    },
    changesPage: async (parameters) => readChanges((await scoped()).store, parameters),
  };
}

/** The options checked and resolved once; the store not opened yet. */
function receiverState(options: ReceiverOptions): ReceiverState {
  const logger = options.logger ?? createLogger({ level: 'warn' });
  const heartbeat = options.heartbeat === false ? undefined : { everyMs: options.heartbeat?.everyMs ?? HEARTBEAT_MS };
  if (heartbeat !== undefined && !(Number.isInteger(heartbeat.everyMs) && heartbeat.everyMs >= 100)) {
    throw new ConfigurationError(`heartbeat.everyMs must be a whole number of milliseconds from 100, got ${String(heartbeat.everyMs)}`);
  }
  const budget = createBodyBudget(options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES, options.bodyRates);
  const admission = createAdmission(options.admission);
  const state: ReceiverState = {
    options,
    logger,
    handlers: createHandlerRegistry(),
    // Decided once: spans only when @opentelemetry/api is installed and a tracer provider registered.
    tracing: activeTracing(),
    eraseHooks: eraseHooksOf(
      options,
      () => runningOf(state)?.store,
      logger,
      (hook, result) => state.metrics.handlerCall(hook, result),
    ),
    metrics: createMetrics(() => runningOf(state)?.store, {
      bufferedBytes: () => budget.held(),
      accounts: () => runningOf(state)?.accounts?.known() ?? [DEFAULT_ACCOUNT],
      cuts: () => budget.cuts(),
      rateLimited: () => admission.refusals(),
      contended: () => admission.contended(),
    }),
    budget,
    admission,
    storeOptions: {
      ...(options.busyTimeoutMs !== undefined && { busyTimeoutMs: options.busyTimeoutMs, timeoutMs: options.busyTimeoutMs }),
      ...(options.poolSize !== undefined && { poolSize: options.poolSize }),
      ...(options.schema !== undefined && { schema: options.schema }),
      ...(options.migrate === false && { migrate: false }),
      logger,
    },
    heartbeat,
    ownsStore: !isStore(options.database),
    setRoutes: () => undefined, // until the intake is made
    background: backgroundSettings(options),
    startBackground: () => undefined, // until the receiver's members are made
    life: { state: 'closed', running: undefined }, // until openReceiverStore, called next
  };
  return state;
}

/** The onErase hooks, called with the dispatcher's attempts, delays and timeout. */
function eraseHooksOf(
  options: ReceiverOptions,
  store: () => Transactions<ErasureTx> | undefined,
  logger: Logger,
  onCall: (hook: string, result: 'ok' | 'failed' | 'timeout') => void,
) {
  const settings = dispatchSettings(options.dispatch ?? {});
  return createErasureHooks({
    store,
    logger,
    attempts: settings.handlerAttempts,
    retryDelayMs: settings.handlerRetryDelayMs,
    timeoutMs: settings.handlerTimeoutMs,
    ...options.eraseHooks,
    onCall,
  });
}

/** The intake on this receiver's store; options it refuses stop what was started, then throw. */
function intakeOf(state: ReceiverState): Intake {
  const { options } = state;
  try {
    return createIntake({
      secrets: [...(options.secrets ?? []), ...(options.secret === undefined ? [] : [options.secret])],
      allowUnsigned: options.allowUnsigned ?? false,
      ...(options.maxBodyBytes !== undefined && { maxBodyBytes: options.maxBodyBytes }),
      budget: state.budget,
      admission: state.admission,
      ...(options.signatureHeader !== undefined && { signatureHeader: options.signatureHeader }),
      ...(options.eventHeader !== undefined && { eventHeader: options.eventHeader }),
      store: (delivery, reading) => storeDelivery(state, delivery, reading),
      ...(options.accounts !== false && { accounts: 'unavailable' as const }),
      logger: state.logger,
      tracing: state.tracing,
    });
  } catch (error) {
    abandon(state);
    throw error;
  }
}

/** The queries, waiting for the database when it is still opening. */
function waitingQueries(use: () => Promise<{ queries: Queries }>): Queries {
  return {
    getCampaign: async (...args) => (await use()).queries.getCampaign(...args),
    listCampaignPage: async (...args) => (await use()).queries.listCampaignPage(...args),
    listCampaigns: async () => (await use()).queries.listCampaigns(),
    listCandidates: async (...args) => (await use()).queries.listCandidates(...args),
    getCandidate: async (...args) => (await use()).queries.getCandidate(...args),
    getCredits: async () => (await use()).queries.getCredits(),
  };
}
