// What a receiver runs beside the intake while it is open, as `serve` runs it: the destinations'
// delivery (docs/destinations.md, "Operating"), the retention of the feed's changes
// (docs/changes.md, "Retention"), reconciliation on a schedule (docs/reconcile.md) and the
// retention of personal data (docs/personal-data.md). The options are resolved once, when the
// receiver is made; the work starts once its store is open and stops first when it closes.
import type { Accounts } from '../accounts/index.js';
import { startDeliveryLoop, type DeliveryLoop } from '../destinations/delivery-loop.js';
import { networkPolicy, type NetworkRules } from '../destinations/network-policy.js';
import { startDeliveryThread } from '../destinations/off-loop-delivery.js';
import { openDestinations } from '../destinations/registry.js';
import { ConfigurationError } from '../errors.js';
import { DEFAULT_ACCOUNT } from '../receive/account.js';
import type { Logger } from '../logging.js';
import { eraseInactiveDaily } from '../privacy/retention-schedule.js';
import { parseDuration } from '../privacy/retention.js';
import { reconcileAccounts, scheduleReconcile, type ReconcileClient, type ReconcileSchedule } from '../reconcile/index.js';
import { keepChangesFor } from '../store/changes-retention.js';
import type { Repeating } from '../repeat.js';
import type { Store } from '../store/store.js';
import type { AccountReceiver } from './api.js';
import { databaseFileOf } from './accounts.js';
import type { ReceiverOptions } from './options.js';

/** How long the feed's changes are kept by default (docs/changes.md). */
const DEFAULT_CHANGES_RETENTION = '30d';
/** How long a stop waits for a reconciliation in progress to end its campaign. */
const RECONCILE_STOP_MS = 3000;

/** The background work as the options asked for it, checked and resolved once; undefined: not run. */
export interface BackgroundSettings {
  destinations: { keyFile?: string; databaseFile?: string; network: NetworkRules; pollMs?: number } | undefined;
  changesRetentionMs: number | undefined;
  reconcile:
    | {
        everyMs: number;
        client: (() => ReconcileClient) | undefined;
        accounts: { baseUrl: string; allowInsecureHttp: boolean } | undefined;
      }
    | undefined;
  eraseInactiveAfterMs: number | undefined;
}

/** A duration option: a whole number and a unit (`30d`), or milliseconds above 0. */
function durationOf(name: string, value: string | number, example: string): number {
  const ms = typeof value === 'string' ? parseDuration(value) : Number.isFinite(value) && value > 0 ? value : undefined;
  if (ms === undefined)
    throw new ConfigurationError(
      `${name} must be a duration such as ${example} (a whole number and a unit, s, m, h, d or w) or milliseconds above 0, got ${JSON.stringify(value)}`,
    );
  return ms;
}

/**
 * The options of the background work, checked now so that a wrong one throws from createReceiver.
 * Delivering and pruning are on by default for a receiver that runs, off for one without a
 * heartbeat (a script that should not be handed work) unless asked for.
 */
export function backgroundSettings(options: ReceiverOptions): BackgroundSettings {
  const runs = options.heartbeat !== false;
  const delivery = options.destinations ?? (runs ? {} : false);
  if (delivery !== false) networkPolicy(delivery.network); // a bad range throws here
  if (delivery !== false && delivery.pollMs !== undefined && !(Number.isFinite(delivery.pollMs) && delivery.pollMs >= 10))
    throw new ConfigurationError(`destinations.pollMs must be a number of milliseconds from 10, got ${String(delivery.pollMs)}`);
  const accounts = options.accounts === false ? undefined : options.accounts;
  const databaseFile = accounts?.databaseFile ?? databaseFileOf(options);
  const keyFile = delivery === false ? undefined : (delivery.keyFile ?? accounts?.keyFile);
  const retention = options.changesRetention ?? (runs ? DEFAULT_CHANGES_RETENTION : false);
  const reconcile = options.reconcile;
  const inactive = options.eraseInactiveAfter ?? false;
  const client = reconcile?.client;
  return {
    destinations:
      delivery === false
        ? undefined
        : {
            ...(keyFile !== undefined && { keyFile }),
            ...(databaseFile !== undefined && { databaseFile }),
            network: delivery.network ?? {},
            ...(delivery.pollMs !== undefined && { pollMs: delivery.pollMs }),
          },
    changesRetentionMs: retention === false ? undefined : durationOf('changesRetention', retention, '30d'),
    reconcile: reconcile && {
      everyMs: durationOf('reconcile.every', reconcile.every, '15m'),
      client: client === undefined ? undefined : typeof client === 'function' ? client : () => client,
      accounts: reconcile.accounts && {
        baseUrl: reconcile.accounts.baseUrl,
        allowInsecureHttp: reconcile.accounts.allowInsecureHttp === true,
      },
    },
    eraseInactiveAfterMs: inactive === false ? undefined : durationOf('eraseInactiveAfter', inactive, '730d'),
  };
}

/** What the background work reaches of the receiver once its store is open. */
export interface BackgroundContext {
  store: Store;
  logger: Logger;
  /** The registry of the other accounts; undefined with `accounts: false`. */
  accounts: Pick<Accounts, 'list' | 'apiKey'> | undefined;
  /** Whether webhooks wait for their write: a delivery round yields to them. */
  intakeBusy: () => boolean;
  /** Counts each settled delivery (the receiver's metrics). */
  onSettled: (account: string, destination: string, outcome: 'delivered' | 'failed' | 'dead') => void;
  /** Counts each round of the delivery (the receiver's metrics). */
  onRound: () => void;
  /** An account's members: reconciliation and erasure go through them (metrics, hooks, the dispatcher). */
  members: (account: string) => Pick<AccountReceiver, 'reconcile' | 'eraseInactive'>;
}

/** The work started; `stop` ends it, the deliveries in flight waited for up to `timeoutMs`. */
export interface Background {
  stop(timeoutMs: number): Promise<void>;
}

/** The delivery on its own thread where the database opens there (docs/destinations.md, "Where delivery runs"), else in this one. */
function deliver(settings: NonNullable<BackgroundSettings['destinations']>, context: BackgroundContext): DeliveryLoop {
  const { store, logger } = context;
  const { network, pollMs, keyFile, databaseFile } = settings;
  const files = { ...(keyFile !== undefined && { keyFile }), ...(databaseFile !== undefined && { databaseFile }) };
  const common = {
    network,
    ...(pollMs !== undefined && { pollMs }),
    logger,
    intakeBusy: context.intakeBusy,
    onSettled: context.onSettled,
    onRound: context.onRound,
  };
  const threaded = startDeliveryThread({ store, ...files, ...common });
  if (threaded !== undefined) return threaded;
  const destinations = openDestinations(store, { ...files, onNotice: (message) => logger.warn(message) });
  return startDeliveryLoop({ store, destinations, ...common });
}

/** The default account's schedule, and the other accounts' (each with its own key). */
function reconcileOnSchedule(settings: NonNullable<BackgroundSettings['reconcile']>, context: BackgroundContext): ReconcileSchedule {
  const { everyMs, client, accounts } = settings;
  const own =
    client &&
    scheduleReconcile({
      everyMs,
      logger: context.logger,
      run: (signal) => context.members(DEFAULT_ACCOUNT).reconcile({ client: client(), signal }),
    });
  const others =
    accounts &&
    context.accounts &&
    reconcileAccounts({
      everyMs,
      apiUrl: accounts.baseUrl,
      allowInsecureHttp: accounts.allowInsecureHttp,
      accounts: context.accounts,
      reconcile: (account, accountClient, signal) => context.members(account).reconcile({ client: accountClient, signal }),
      logger: context.logger,
    });
  return { stop: async (timeoutMs) => void (await Promise.all([own?.stop(timeoutMs), others?.stop()])) };
}

export function startBackground(settings: BackgroundSettings, context: BackgroundContext): Background {
  const { logger } = context;
  const delivering = settings.destinations && deliver(settings.destinations, context);
  const changes: Repeating | undefined =
    settings.changesRetentionMs === undefined ? undefined : keepChangesFor(context.store, settings.changesRetentionMs, logger);
  const reconciling = settings.reconcile && reconcileOnSchedule(settings.reconcile, context);
  const olderThan = settings.eraseInactiveAfterMs;
  const retention: Repeating | undefined =
    olderThan === undefined ? undefined : eraseInactiveDaily(() => context.members(DEFAULT_ACCOUNT).eraseInactive({ olderThan }), logger);
  return {
    async stop(timeoutMs) {
      await Promise.all([
        delivering?.stop(timeoutMs),
        changes?.stop(),
        reconciling?.stop(Math.min(RECONCILE_STOP_MS, timeoutMs)),
        retention?.stop(),
      ]);
    },
  };
}
