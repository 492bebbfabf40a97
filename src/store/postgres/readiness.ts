// Readiness and durability: the schema made ready at open, the probe behind /readyz, and flush.
import type { Logger } from 'pino';
import type { ReadinessProbe } from '../rows.js';
import { unavailable } from './connection.js';
import { MigrationsPendingError } from '../migrations.js';
import { checkSchema, migrate, pendingMigrations } from './migrations.js';
import { compactBodies } from './compact-bodies.js';
import { checkOut, inTransaction, query, type Engine } from './session.js';

export interface SchemaOptions {
  location: string;
  schema?: string;
  /** Check the schema instead of migrating it (read-only commands). */
  readonly?: boolean;
  /** false: refuse a schema that needs migrations instead of applying them. */
  migrate?: boolean;
  logger?: Pick<Logger, 'warn' | 'error'>;
}

/** Migrates (once across replicas) or checks the schema, and warns when commits do not wait for the disk. */
export async function prepareSchema(engine: Engine, options: SchemaOptions): Promise<void> {
  const client = await checkOut(engine);
  try {
    if (options.readonly) await checkSchema(client, options.location);
    else if (options.migrate === false) {
      const pending = await pendingMigrations(client);
      if (pending.length > 0) throw new MigrationsPendingError(options.location, pending);
    } else {
      await migrate(client, options.schema);
      // Rows stored before bodies were compressed, rewritten (none once done: resumes if cut short).
      await compactBodies(client);
    }
    const { rows } = await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
    if (rows[0]?.synchronous_commit === 'off') {
      options.logger?.warn(
        { location: options.location },
        'PostgreSQL synchronous_commit is off: a 2xx no longer means the event is on disk (a server crash can lose the last acknowledged events). Set synchronous_commit = on for this database or user.',
      );
    }
  } finally {
    client.release();
  }
}

/** Whether a write can be taken now: a real write, committed, since a connection alone does not tell a read-only or full server. */
export async function probe(engine: Engine): Promise<ReadinessProbe> {
  if (engine.closed) return { ok: false, reason: 'closed' };
  try {
    await inTransaction(engine, async (tx) => {
      await query(
        tx,
        `INSERT INTO settings (key, value, updated_at) VALUES ('readiness_probe', 'ok', now())
                  ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at`,
      );
    });
    return { ok: true };
  } catch (error) {
    const failure = unavailable(error);
    return { ok: false, reason: failure ? `${failure.code}: ${failure.message}` : (error as Error).message };
  }
}

/** Makes every commit so far durable, those made with synchronous_commit off included. */
export async function flush(engine: Engine): Promise<void> {
  // A transaction that is given an id writes a commit record, and a synchronous commit waits
  // for the WAL to be flushed up to it: every earlier commit is on disk with it.
  await inTransaction(engine, async (tx) => void (await query(tx, 'SELECT txid_current()')));
}
