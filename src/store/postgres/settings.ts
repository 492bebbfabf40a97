// Settings: one row per key, with when it was last set.
import { query, type Session } from './session.js';

type Stored = { value: string; updated_at: string };

export async function setting(db: Session, key: string): Promise<Stored | undefined> {
  const [row] = await query<Stored>(db, 'SELECT value, updated_at FROM settings WHERE key = $1', [key]);
  return row;
}

/** Stores the value unless the key has one; returns the stored value (ours, or one set first by another process). */
export async function settingOnce(db: Session, key: string, value: string): Promise<Stored & { created: boolean }> {
  const inserted = await query<Stored>(
    db,
    'INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, now()) ON CONFLICT (key) DO NOTHING RETURNING value, updated_at',
    [key, value],
  );
  if (inserted[0] !== undefined) return { ...inserted[0], created: true };
  const [stored] = await query<Stored>(db, 'SELECT value, updated_at FROM settings WHERE key = $1', [key]);
  return { ...stored!, created: false };
}

/** Sets a setting (inserted or replaced), committed with the rest of `tx`. */
export async function putSetting(tx: Session, key: string, value: string): Promise<void> {
  await query(
    tx,
    'INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, now()) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
    [key, value],
  );
}
