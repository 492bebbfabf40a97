import { randomBytes } from 'node:crypto';
import type { SettingsPort } from './write-ports.js';

export const GENERATED_SECRET = 'generated_webhook_secret';

/**
 * The secret generated for a standalone receiver started without one: created once (32 random
 * bytes, as `whsec_` + 64 hex), then reused, by every process that shares the database (the
 * first to store it wins). `created` says whether this call made it.
 */
export async function generatedSecret(store: SettingsPort): Promise<{ secret: string; created: boolean; since: string }> {
  const found = await store.setting(GENERATED_SECRET);
  if (found !== undefined) return { secret: found.value, created: false, since: found.updated_at };
  const stored = await store.settingOnce(GENERATED_SECRET, `whsec_${randomBytes(32).toString('hex')}`);
  return { secret: stored.value, created: stored.created, since: stored.updated_at };
}
