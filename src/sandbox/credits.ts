// The credit account of an agency: the balance, the month's use, the reset, and the two credit events.
import { CHANNEL_COSTS, type Channel, type CreditsResponse, type SubscriptionType } from '../api/index.js';
import type { Emitter } from './events.js';
import type { CreditAccount } from './state.js';

/** The first day of the month after `now`, UTC, YYYY-MM-DD. */
function nextResetDate(now: number): string {
  const date = new Date(now);
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
}

export function createCreditAccount(allowance: number, subscription: SubscriptionType, lowThreshold: number, now: number): CreditAccount {
  return {
    available: allowance,
    usedThisMonth: 0,
    monthlyAllowance: allowance,
    subscription,
    resetDate: nextResetDate(now),
    lowThreshold,
    lowSent: false,
    transactions: [],
  };
}

/** Monthly credits reset on the reset date; unused ones are not carried over. Pay as you go never resets. */
export function rollOver(account: CreditAccount, now: number): void {
  if (account.subscription === 'Pay as you go') return;
  if (new Date(now).toISOString().slice(0, 10) < account.resetDate) return;
  account.available = account.monthlyAllowance;
  account.usedThisMonth = 0;
  account.resetDate = nextResetDate(now);
  if (account.available >= account.lowThreshold) account.lowSent = false;
}

export function creditsResponse(account: CreditAccount): CreditsResponse {
  return {
    credits_available: account.available,
    // Documented as an integer while an SMS costs 0.25: a started credit counts as used.
    credits_used_this_month: Math.ceil(account.usedThisMonth),
    subscription_type: account.subscription,
    reset_date: account.resetDate,
  };
}

/** What the candidates reached by these channels cost. */
export function costOf(channels: readonly Channel[]): number {
  return channels.reduce((sum, channel) => sum + CHANNEL_COSTS[channel].credits, 0);
}

/**
 * Takes the cost of one candidate reached by `channel`, records the transaction, and sends
 * `credits.low` the first time the balance is below the threshold and `credits.depleted` when
 * it reaches 0. The caller has checked the balance covers it.
 */
export function charge(account: CreditAccount, channel: Channel, campaignId: string, emitter: Emitter, at: string): void {
  const { credits, transaction_type } = CHANNEL_COSTS[channel];
  if (transaction_type === null) return;
  const before = account.available;
  account.available = before - credits;
  account.usedThisMonth += credits;
  account.transactions.push({ transaction_type, amount: credits, campaign_id: campaignId, at });
  if (!account.lowSent && account.available < account.lowThreshold) {
    account.lowSent = true;
    emitter.emit('credits.low', { credits_remaining: account.available, threshold: account.lowThreshold });
  }
  if (before > 0 && account.available <= 0) {
    emitter.emit('credits.depleted', { credits_remaining: account.available, last_campaign_id: campaignId });
  }
}
