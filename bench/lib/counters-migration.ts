// How long PostgreSQL's counters migration (migrations/postgres/015_counters.sql) holds its locks
// on a loaded database, and what the intake answers meanwhile. The database is already migrated,
// so what 015 made is dropped and 015 applied again, in one transaction, as `migrate` applies
// it; the deliveries of a running serve keep coming every `everyMs` throughout. The migration's
// triggers lock the inbox and the candidates against writes from their creation to the commit,
// while it counts the rows already stored.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { ROOT } from './paths.js';
import { distribution, round } from './stats.js';
import type { Distribution } from './types.js';

export interface CountersMigration {
  inboxRows: number;
  candidateRows: number;
  /** From the first lock (the undo) to the commit. */
  heldMs: number;
  /** 015 itself: its triggers, then its counts. */
  countingMs: number;
  perMillionRowsMs: number | null;
  deliveries: Distribution & { statuses: Record<string, number> };
}

// What 015 made, dropped (the trigger functions take their triggers with them).
const UNDO = `
  DROP FUNCTION inbox_counted() CASCADE;
  DROP FUNCTION handler_failures_counted() CASCADE;
  DROP FUNCTION candidates_counted() CASCADE;
  DROP FUNCTION candidate_counted(candidates, integer);
  DROP FUNCTION counters_add(text, text, text, bigint, bigint);
  DROP FUNCTION fold_counters();
  DROP TABLE counters;
  DROP INDEX inbox_by_received;`;

export async function measureCountersMigration(
  url: string,
  deliver: (n: number) => Promise<{ status: number; ms: number }>,
  everyMs: number,
): Promise<CountersMigration> {
  const migration = readFileSync(join(ROOT, 'migrations/postgres/015_counters.sql'), 'utf8');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const sent: Array<Promise<{ status: number; ms: number }>> = [];
  let migrating = true;
  const sender = (async () => {
    for (let n = 2_000_000; migrating; n++) {
      sent.push(deliver(n));
      await delay(everyMs);
    }
  })();
  try {
    const [{ inbox, candidates }] = (
      await client.query('SELECT (SELECT COUNT(*) FROM inbox)::int AS inbox, (SELECT COUNT(*) FROM candidates)::int AS candidates')
    ).rows as [{ inbox: number; candidates: number }];
    await delay(500); // deliveries before the locks, as a reference
    await client.query('BEGIN');
    const started = performance.now();
    await client.query(UNDO);
    const counting = performance.now();
    await client.query(migration);
    const counted = performance.now();
    await client.query('COMMIT');
    const heldMs = performance.now() - started;
    migrating = false;
    await sender;
    const deliveries = await Promise.all(sent);
    const statuses: Record<string, number> = {};
    for (const d of deliveries) statuses[String(d.status)] = (statuses[String(d.status)] ?? 0) + 1;
    return {
      inboxRows: inbox,
      candidateRows: candidates,
      heldMs: Math.round(heldMs),
      countingMs: Math.round(counted - counting),
      perMillionRowsMs: round((heldMs / inbox) * 1e6, 0),
      deliveries: { ...distribution(deliveries.map((d) => d.ms)), statuses },
    };
  } finally {
    migrating = false;
    await client.end();
  }
}
