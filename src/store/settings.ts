import { randomBytes } from 'node:crypto';
import type { SqliteDatabase } from './sqlite/database.js';

const GENERATED_SECRET = 'generated_webhook_secret';

/**
 * The secret generated for a standalone receiver started without one: created once (32 random
 * bytes, as `whsec_` + 64 hex), then reused. `created` says whether this call made it.
 */
export function generatedSecret(db: SqliteDatabase): { secret: string; created: boolean; since: string } {
  const found = db.prepare('SELECT value, updated_at FROM settings WHERE key = ?').get(GENERATED_SECRET) as
    | { value: string; updated_at: string }
    | undefined;
  if (found !== undefined) return { secret: found.value, created: false, since: found.updated_at };
  const secret = `whsec_${randomBytes(32).toString('hex')}`;
  const since = new Date().toISOString();
  db.prepare('INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)').run(GENERATED_SECRET, secret, since);
  return { secret, created: true, since };
}

/** The stored generated secret, if any (for `prequal-hooks secret`). */
export function readGeneratedSecret(db: SqliteDatabase): string | undefined {
  return db.prepare('SELECT value FROM settings WHERE key = ?').pluck().get(GENERATED_SECRET) as string | undefined;
}
