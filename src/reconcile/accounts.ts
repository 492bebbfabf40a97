// Reconciliation on a schedule for the accounts of the registry (`ReceiverOptions.reconcile`,
// `serve --reconcile-every`): each account that has an API key (`accounts set-api-key`,
// `accounts add --api-key-file`) is reconciled with its own key, on its own schedule, its first run
// spread over the period so that fifty accounts do not call the service at once. Accounts added,
// disabled or removed meanwhile are taken up within a minute.
import { createHash } from 'node:crypto';
import type { Accounts } from '../accounts/index.js';
import { createClient } from '../client/client.js';
import type { Logger } from '../logging.js';
import type { ReconcileClient, ReconcileReport } from './reconcile.js';
import { scheduleReconcile, type ReconcileSchedule } from './schedule.js';

/** How often the list of accounts to reconcile is read again. */
const REFRESH_MS = 60_000;

export interface AccountsReconcile {
  stop(): Promise<void>;
}

/** Where in the period an account's first run falls: the same place at every start, different for each account. */
function offsetOf(account: string, everyMs: number): number {
  const spread = Math.min(everyMs, 60 * 60_000);
  return createHash('sha256').update(account).digest().readUInt32BE(0) % spread;
}

export function reconcileAccounts(options: {
  everyMs: number;
  /** The service's address, where each account's own key is sent. */
  apiUrl: string;
  allowInsecureHttp: boolean;
  /** The registry: which accounts have an API key, and each key. */
  accounts: Pick<Accounts, 'list' | 'apiKey'>;
  /** Reconciles one account with a client of its own key (`receiver.forAccount(id).reconcile`). */
  reconcile: (account: string, client: ReconcileClient, signal: AbortSignal) => Promise<ReconcileReport>;
  logger: Logger;
}): AccountsReconcile {
  const { everyMs, accounts, logger } = options;
  const schedules = new Map<string, ReconcileSchedule>();
  const startFor = (account: string) =>
    scheduleReconcile({
      everyMs,
      firstInMs: offsetOf(account, everyMs),
      logger: logger.child({ account }),
      run: async (signal) => {
        const apiKey = await accounts.apiKey(account);
        if (apiKey === undefined) throw Object.assign(new Error('the account has no API key any more'), { code: 'NO_API_KEY' });
        const client = createClient({ apiKey, baseUrl: options.apiUrl, allowInsecureHttp: options.allowInsecureHttp });
        return await options.reconcile(account, client, signal);
      },
    });
  const refresh = async () => {
    const wanted = new Set((await accounts.list()).filter((a) => a.state === 'active' && a.hasApiKey).map((a) => a.account));
    for (const [account, schedule] of schedules) {
      if (wanted.has(account)) continue;
      schedules.delete(account);
      void schedule.stop();
    }
    for (const account of wanted) if (!schedules.has(account)) schedules.set(account, startFor(account));
  };
  const tick = () =>
    void refresh().catch((error: unknown) =>
      logger.warn({ err: { message: (error as Error).message } }, 'cannot read the accounts to reconcile; tried again in a minute'),
    );
  const timer = setInterval(tick, REFRESH_MS);
  timer.unref();
  tick();
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all([...schedules.values()].map((s) => s.stop()));
      schedules.clear();
    },
  };
}
