import { z } from 'zod';

/** The account's plan, as the credits endpoint reports it. */
export type SubscriptionType = 'Service Echo' | 'Service Resonance' | 'Service Symphony' | 'Pay as you go';
const SUBSCRIPTION_TYPES = [
  'Service Echo',
  'Service Resonance',
  'Service Symphony',
  'Pay as you go',
] as const satisfies readonly SubscriptionType[];
export type TransactionType = 'campaign' | 'sourcing';

/** What one candidate costs by the channel actually used (docs/sandbox.md, "The API": credits). */
export const CHANNEL_COSTS = {
  call: { credits: 1, transaction_type: 'campaign' },
  sms: { credits: 0.25, transaction_type: 'sourcing' },
  email: { credits: 0, transaction_type: null },
} as const satisfies Record<string, { credits: number; transaction_type: TransactionType | null }>;

/** 200 answer of `GET /account/credits`. */
export const creditsResponseSchema = z.object({
  credits_available: z.number(),
  credits_used_this_month: z.int().min(0),
  subscription_type: z.enum(SUBSCRIPTION_TYPES),
  reset_date: z.iso.date(),
});
/** The answer of `getCredits`. */
export type CreditsResponse = z.infer<typeof creditsResponseSchema>;
