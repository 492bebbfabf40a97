import type { Logger } from 'pino';
import type { QueryConfig, QueryResultRow } from 'pg';
import type { Delivery } from '../../receive/delivery.js';
import {
  StoreUnavailableError,
  type Appended,
  type HandlerClaimOptions,
  type HandlerFailureRow,
  type InboxRow,
  type InboxState,
  type ReadinessProbe,
  type RowKeys,
  type RowWrites,
  type Settlement,
  type SettledDelivery,
  type Store,
  type StoredRow,
  type StoredRows,
  type WriteOptions,
  type WriteTx,
} from '../store.js';
import { CAMPAIGN_COLUMNS, CANDIDATE_COLUMNS, CREDITS_COLUMNS, type CampaignRow, type CandidateRow, type CreditsRow } from '../tables.js';
import { typeParsers, unavailable, type Pool, type PoolClient } from './connection.js';
import { checkSchema, migrate } from './migrations.js';
import { postgresPresence } from './presence.js';

export interface PostgresStoreOptions {
  /** For logs: the URL without its password. */
  location: string;
  /** Whether the store made the pool (then it ends it on close). */
  ownsPool: boolean;
  /** The schema the pool's search_path names, created at the first start when given. */
  schema?: string;
  /** Check the schema instead of migrating it (read-only commands). */
  readonly?: boolean;
  logger?: Pick<Logger, 'warn' | 'error'>;
}

// PostgreSQL types of the projected columns (PROJECTION.md section 7), for the array casts below.
const COLUMN_TYPES: Record<string, string> = {
  campaign_id: 'text', job_title: 'text', contract_type: 'text', candidate_link: 'text', questions_count: 'integer',
  status: 'text', created_at: 'timestamptz', candidate_id: 'text', first_name: 'text', last_name: 'text', email: 'text',
  phone: 'text', is_sourced: 'boolean', call_queued: 'boolean', sms_sent: 'boolean', interview_score: 'double precision',
  interview_date: 'timestamptz', interview_started_at: 'timestamptz', availability: 'text', availability_start: 'text',
  salary_expectation: 'text', candidate_alignment: 'text', strengths: 'text', concerns: 'text', failure_reason: 'text',
  added_at: 'timestamptz', credits_remaining: 'double precision', low_threshold: 'double precision',
  last_campaign_id: 'text', account: 'integer', field_versions: 'text',
};

const INBOX_COLUMNS = `inbox_id, received_at, raw, identity, raw_sha256, kind, verdict, secret_id, state, reasons, attempts, processed_at, handlers_pending`;

// `?` placeholders (what query/ writes for both engines) as PostgreSQL's `$n`.
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

const WORK_CHANNEL = 'prequal_hooks_work';

/** Opens the PostgreSQL engine on a pool: migrates (once across replicas), checks durability settings. */
export async function createPostgresStore(pool: Pool, options: PostgresStoreOptions): Promise<Store> {
  const types = await typeParsers();
  const logger = options.logger;

  // A checked-out client whose server goes away emits 'error'; with no listener that would crash
  // the process. The failure reaches us anyway through the query in flight.
  const guarded = new WeakSet<PoolClient>();
  const client = await connect();
  try {
    if (options.readonly) await checkSchema(client, options.location);
    else await migrate(client, options.schema);
    const { rows } = await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
    if (rows[0]?.synchronous_commit === 'off') {
      logger?.warn(
        { location: options.location },
        'PostgreSQL synchronous_commit is off: a 2xx no longer means the event is on disk (a server crash can lose the last acknowledged events). Set synchronous_commit = on for this database or user.',
      );
    }
  } finally {
    client.release();
  }

  async function connect(): Promise<PoolClient> {
    try {
      const client = await pool.connect();
      if (!guarded.has(client)) {
        guarded.add(client);
        client.on('error', () => undefined);
      }
      return client;
    } catch (error) {
      throw unavailable(error) ?? error;
    }
  }

  function q<R extends QueryResultRow>(on: { query: PoolClient['query'] }, text: string, values: unknown[] = []): Promise<R[]> {
    const config: QueryConfig = { text, values, types };
    return (on.query(config) as Promise<{ rows: R[] }>).then(
      (result) => result.rows,
      (error: unknown) => {
        throw unavailable(error) ?? error;
      },
    );
  }

  const inboxRow = (row: Record<string, unknown>): InboxRow => row as unknown as InboxRow;

  function transaction(c: PoolClient): WriteTx {
    return {
      async append(deliveries: readonly Delivery[]): Promise<Appended[]> {
        if (deliveries.length === 0) return [];
        // One statement for the batch. Rows are inserted in the batch's order (ORDER BY ord), so
        // their ids increase in that order: the returned ids, sorted, belong to the deliveries
        // that were inserted, in turn. A body with no identity never conflicts.
        const inserted = await q<{ inbox_id: number; identity: string | null; raw_sha256: string | null }>(
          c,
          `INSERT INTO inbox (received_at, raw, identity, raw_sha256, kind, verdict, secret_id, state, reasons, handler_key)
           SELECT r, b, i, h, k, v, s, st, re, hk
           FROM unnest($1::timestamptz[], $2::bytea[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
             WITH ORDINALITY AS d(r, b, i, h, k, v, s, st, re, hk, ord)
           ORDER BY ord
           ON CONFLICT DO NOTHING
           RETURNING inbox_id, identity, raw_sha256`,
          [
            deliveries.map((d) => d.receivedAt),
            deliveries.map((d) => Buffer.from(d.raw.buffer, d.raw.byteOffset, d.raw.byteLength)),
            deliveries.map((d) => d.identity),
            deliveries.map((d) => d.rawSha256 ?? null),
            deliveries.map((d) => d.kind),
            deliveries.map((d) => d.verdict),
            deliveries.map((d) => d.secretId),
            deliveries.map((d) => (d.verdict === 'accepted' ? 'pending' : 'dead')),
            deliveries.map((d) => (d.reasons === null ? null : JSON.stringify(d.reasons))),
            deliveries.map((d) => d.handlerKey ?? null),
          ],
        );
        // A delivery is known by its identity, or (not an event) by its raw-bytes hash.
        const keyOf = (identity: string | null, raw: string | null | undefined) => (identity !== null ? `e:${identity}` : raw ? `r:${raw}` : null);
        const fresh = new Set(inserted.map((r) => keyOf(r.identity, r.raw_sha256)).filter((k): k is string => k !== null));
        const ids = inserted.map((r) => r.inbox_id).sort((x, y) => x - y);
        let next = 0;
        return deliveries.map((d): Appended => {
          // The first delivery of a key in the batch took the row; any later one is a duplicate.
          const key = keyOf(d.identity, d.rawSha256);
          if (key !== null && !fresh.delete(key)) return { inboxId: null, duplicate: true };
          return { inboxId: ids[next++]!, duplicate: false };
        });
      },
      async known(identities: readonly string[]): Promise<Set<string>> {
        if (identities.length === 0) return new Set();
        const rows = await q<{ identity: string }>(c, 'SELECT identity FROM inbox WHERE identity = ANY($1::text[])', [identities]);
        return new Set(rows.map((r) => r.identity));
      },
      async appendSettled(rows: readonly SettledDelivery[], at: string): Promise<void> {
        if (rows.length === 0) return;
        await q(
          c,
          `INSERT INTO inbox (received_at, raw, identity, kind, verdict, secret_id, state, reasons, processed_at, handlers_pending, handler_key, attempts)
           SELECT r, b, i, k, 'accepted', s, st, re, $10::timestamptz, h, hk, 1
           FROM unnest($1::timestamptz[], $2::bytea[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::boolean[], $9::text[])
             AS v(r, b, i, k, s, st, re, h, hk)`,
          [
            rows.map((r) => r.delivery.receivedAt),
            rows.map((r) => Buffer.from(r.delivery.raw.buffer, r.delivery.raw.byteOffset, r.delivery.raw.byteLength)),
            rows.map((r) => r.delivery.identity),
            rows.map((r) => r.delivery.kind),
            rows.map((r) => r.delivery.secretId),
            rows.map((r) => r.state),
            rows.map((r) => (r.reasons === null ? null : JSON.stringify(r.reasons))),
            rows.map((r) => r.handlers),
            rows.map((r) => r.delivery.handlerKey ?? null),
            at,
          ],
        );
      },
      async claimPending(limit: number): Promise<InboxRow[]> {
        const rows = await q(
          c,
          `SELECT ${INBOX_COLUMNS} FROM inbox WHERE state = 'pending' ORDER BY inbox_id LIMIT $1 FOR UPDATE SKIP LOCKED`,
          [limit],
        );
        return rows.map(inboxRow);
      },
      async lockRows(keys: RowKeys): Promise<StoredRows> {
        const [campaigns, candidates, credits] = [
          await lockTable<CampaignRow>(c, 'campaigns', 'campaign_id', CAMPAIGN_COLUMNS, keys.campaigns),
          await lockTable<CandidateRow>(c, 'candidates', 'candidate_id', CANDIDATE_COLUMNS, keys.candidates),
          keys.credits ? await lockTable<CreditsRow>(c, 'credits', 'account', CREDITS_COLUMNS, [1]) : undefined,
        ];
        return { campaigns, candidates, credits: credits?.get('1') };
      },
      async saveRows(writes: RowWrites): Promise<void> {
        await saveTable(c, 'campaigns', 'campaign_id', CAMPAIGN_COLUMNS, writes.campaigns, (r) => r.campaign_id);
        await saveTable(c, 'candidates', 'candidate_id', CANDIDATE_COLUMNS, writes.candidates, (r) => r.candidate_id);
        if (writes.credits) await saveTable(c, 'credits', 'account', CREDITS_COLUMNS, [writes.credits], () => 1);
        if (writes.responses.size > 0) {
          const ids = [...writes.responses.keys()];
          await q(c, 'DELETE FROM interview_responses WHERE candidate_id = ANY($1::text[])', [ids]);
          const flat = [...writes.responses].flatMap(([id, responses]) => responses.map((r, position) => ({ id, position, ...r })));
          if (flat.length > 0) {
            await q(
              c,
              `INSERT INTO interview_responses (candidate_id, position, question, answer, score, explanation)
               SELECT * FROM unnest($1::text[], $2::integer[], $3::text[], $4::text[], $5::double precision[], $6::text[])`,
              [flat.map((r) => r.id), flat.map((r) => r.position), flat.map((r) => r.question), flat.map((r) => r.answer), flat.map((r) => r.score), flat.map((r) => r.explanation)],
            );
          }
        }
      },
      async resetProjection(): Promise<number> {
        await q(c, 'TRUNCATE interview_responses, candidates, campaigns, credits');
        const reset = await q<{ n: number }>(
          c,
          `WITH reset AS (UPDATE inbox SET state = 'pending' WHERE verdict = 'accepted' RETURNING 1) SELECT COUNT(*)::int AS n FROM reset`,
        );
        return reset[0]!.n;
      },
      async putSetting(key: string, value: string): Promise<void> {
        await q(c, 'INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, now()) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at', [key, value]);
      },
      async settle(settlements: readonly Settlement[], at: string, settleOptions = {}): Promise<void> {
        if (settlements.length === 0) return;
        const handlers = settleOptions.keepHandlers ? '' : 'handlers_pending = v.handlers,';
        await q(
          c,
          `UPDATE inbox SET state = v.state, reasons = v.reasons, processed_at = $5::timestamptz,
             ${handlers} attempts = inbox.attempts + 1
           FROM unnest($1::bigint[], $2::text[], $3::text[], $4::boolean[]) AS v(inbox_id, state, reasons, handlers)
           WHERE inbox.inbox_id = v.inbox_id`,
          [
            settlements.map((s) => s.inboxId),
            settlements.map((s) => s.state),
            settlements.map((s) => (s.reasons === null ? null : JSON.stringify(s.reasons))),
            settlements.map((s) => s.handlers),
            at,
          ],
        );
      },
    };
  }

  async function lockTable<T>(c: PoolClient, table: string, key: string, columns: readonly string[], keys: readonly (string | number)[]) {
    const found = new Map<string, StoredRow<T>>();
    if (keys.length === 0) return found;
    const type = COLUMN_TYPES[key]!;
    // Create what is missing, in key order, then lock in key order: processes never wait in a cycle.
    await q(c, `INSERT INTO ${table} (${key}) SELECT k FROM unnest($1::${type}[]) AS k ORDER BY k ON CONFLICT (${key}) DO NOTHING`, [keys]);
    const rows = await q<Record<string, unknown>>(
      c,
      `SELECT ${key}, ${columns.join(', ')}, field_versions FROM ${table} WHERE ${key} = ANY($1::${type}[]) ORDER BY ${key} FOR UPDATE`,
      [keys],
    );
    for (const { field_versions, ...row } of rows) {
      const id = String(row[key]);
      if (table === 'credits') delete row.account;
      found.set(id, { row: row as T, field_versions: field_versions as string });
    }
    return found;
  }

  async function saveTable<T>(c: PoolClient, table: string, key: string, columns: readonly string[], rows: readonly StoredRow<T>[], keyOf: (row: T) => string | number) {
    if (rows.length === 0) return;
    const all = [key, ...columns, 'field_versions'];
    const values = all.map((column) =>
      rows.map(({ row, field_versions }) =>
        column === key ? keyOf(row) : column === 'field_versions' ? field_versions : ((row as Record<string, unknown>)[column] ?? null),
      ),
    );
    await q(
      c,
      `UPDATE ${table} SET ${[...columns, 'field_versions'].map((column) => `${column} = v.${column}`).join(', ')}
       FROM unnest(${all.map((column, i) => `$${i + 1}::${COLUMN_TYPES[column]}[]`).join(', ')}) AS v(${all.join(', ')})
       WHERE ${table}.${key} = v.${key}`,
      values,
    );
  }

  let closed = false;
  /** One transaction on one connection: committed when `work` resolves, rolled back when it throws. */
  async function inTransaction<T>(work: (c: PoolClient) => Promise<T>, writeOptions: WriteOptions = {}): Promise<T> {
    if (closed) throw new StoreUnavailableError('CLOSED', 'the store is closed');
    const c = await connect();
    let broken = false;
    try {
      await q(c, 'BEGIN');
      // A projection batch lost to a server crash is only pending again: its commit need not wait for the disk.
      if (writeOptions.durable === false) await q(c, 'SET LOCAL synchronous_commit = off');
      const result = await work(c);
      await q(c, 'COMMIT');
      return result;
    } catch (error) {
      await c.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw unavailable(error) ?? error;
    } finally {
      c.release(broken ? true : undefined);
    }
  }
  const write = <T>(work: (tx: WriteTx) => Promise<T>, writeOptions?: WriteOptions) =>
    inTransaction((c) => work(transaction(c)), writeOptions);

  const read = <R extends QueryResultRow>(text: string, values: unknown[] = []) => q<R>(pool as unknown as PoolClient, text, values);

  // Wake-ups from other processes: one listening connection, re-established when it drops.
  const listeners = new Set<() => void>();
  let listener: PoolClient | undefined;
  let listening: Promise<void> | undefined;
  function listen(): void {
    if (closed || listener !== undefined || listening !== undefined || listeners.size === 0) return;
    listening = (async () => {
      try {
        const c = await connect();
        c.on('notification', () => listeners.forEach((l) => l()));
        c.on('error', () => {
          listener = undefined;
          c.release(true);
          setTimeout(listen, 1000).unref();
        });
        await c.query(`LISTEN ${WORK_CHANNEL}`);
        listener = c;
        listeners.forEach((l) => l()); // whatever was announced while we were not listening
      } catch {
        setTimeout(listen, 1000).unref();
      } finally {
        listening = undefined;
      }
    })();
  }
  let announcing = false;
  let announceAgain = false;
  function announceWork(): void {
    if (closed) return;
    if (announcing) {
      announceAgain = true;
      return;
    }
    announcing = true;
    void pool
      .query(`NOTIFY ${WORK_CHANNEL}`)
      .catch(() => undefined) // the pollers behind the notifications pick the work up anyway
      .finally(() => {
        announcing = false;
        if (announceAgain) {
          announceAgain = false;
          announceWork();
        }
      });
  }

  const store: Store = {
    location: options.location,
    // Leave connections for projection, handlers, reads and the listener.
    writeConcurrency: Math.max(1, Math.floor(((pool as { options?: { max?: number } }).options?.max ?? 10) / 2)),
    write,
    async inboxRow(id) {
      const [row] = await read(`SELECT ${INBOX_COLUMNS} FROM inbox WHERE inbox_id = $1`, [id]);
      return row === undefined ? undefined : inboxRow(row);
    },
    async counts() {
      const result = { pending: 0, projected: 0, unknown: 0, dead: 0, handler_failures: 0 } as Record<InboxState, number> & { handler_failures: number };
      for (const { state, count } of await read<{ state: InboxState; count: number }>('SELECT state, COUNT(*) AS count FROM inbox GROUP BY state')) {
        result[state] = count;
      }
      const [failures] = await read<{ n: number }>('SELECT COUNT(*) AS n FROM handler_failures');
      result.handler_failures = failures!.n;
      return result;
    },
    async hasPending() {
      return (await read("SELECT 1 FROM inbox WHERE state = 'pending' LIMIT 1")).length > 0;
    },
    async setAside(afterId, limit) {
      const rows = await read(
        `SELECT ${INBOX_COLUMNS} FROM inbox WHERE state IN ('unknown', 'dead') AND inbox_id > $1 ORDER BY inbox_id LIMIT $2`,
        [afterId, limit],
      );
      return rows.map(inboxRow);
    },
    async requeue(ids) {
      const rows = await read<{ inbox_id: number }>(
        `UPDATE inbox SET state = 'pending' WHERE inbox_id = ANY($1::bigint[]) AND state IN ('unknown', 'dead') AND verdict = 'accepted'
         RETURNING inbox_id`,
        [ids],
      );
      const done = new Set(rows.map((r) => r.inbox_id));
      if (done.size > 0) announceWork();
      return { requeued: ids.filter((id) => done.has(id)), skipped: ids.filter((id) => !done.has(id)) };
    },
    async claimHandlers(claim: HandlerClaimOptions) {
      const rows = await read(
        `WITH due AS (
           SELECT i.inbox_id FROM inbox i
           WHERE i.handlers_pending AND (i.handlers_lease_until IS NULL OR i.handlers_lease_until < now())
             AND NOT EXISTS (SELECT 1 FROM inbox j WHERE j.handler_key = i.handler_key AND j.inbox_id < i.inbox_id
                               AND (j.handlers_pending OR j.state = 'pending'))
             AND NOT (i.inbox_id = ANY($3::bigint[]))
           ORDER BY i.inbox_id LIMIT $2
           FOR UPDATE SKIP LOCKED)
         UPDATE inbox SET handlers_owner = $1, handlers_lease_until = now() + $4 * interval '1 millisecond'
         FROM due WHERE inbox.inbox_id = due.inbox_id
         RETURNING ${INBOX_COLUMNS.split(', ').map((c) => `inbox.${c}`).join(', ')}`,
        [claim.owner, claim.limit, [...claim.running], claim.leaseMs],
      );
      return rows.map(inboxRow).sort((a, b) => a.inbox_id - b.inbox_id);
    },
    async renewHandlerClaims(owner, ids, leaseMs) {
      if (ids.length === 0) return;
      await read(
        `UPDATE inbox SET handlers_lease_until = now() + $3 * interval '1 millisecond'
         WHERE inbox_id = ANY($1::bigint[]) AND handlers_owner = $2 AND handlers_pending`,
        [ids, owner, leaseMs],
      );
    },
    async handlersDone(id) {
      await read('UPDATE inbox SET handlers_pending = false, handlers_owner = NULL, handlers_lease_until = NULL WHERE inbox_id = $1', [id]);
    },
    async releaseHandlers(owner, ids) {
      if (ids.length === 0) return;
      await read('UPDATE inbox SET handlers_owner = NULL, handlers_lease_until = NULL WHERE inbox_id = ANY($1::bigint[]) AND handlers_owner = $2', [ids, owner]);
    },
    async recordHandlerFailure(f) {
      await read('INSERT INTO handler_failures (inbox_id, handler, error, attempts, failed_at) VALUES ($1, $2, $3, $4, $5)', [
        f.inbox_id, f.handler, f.error, f.attempts, f.failed_at,
      ]);
    },
    async handlerFailures(afterId, limit) {
      return await read<HandlerFailureRow & QueryResultRow>('SELECT * FROM handler_failures WHERE failure_id > $1 ORDER BY failure_id LIMIT $2', [afterId, limit]);
    },
    async retryHandlerFailures(ids) {
      return await inTransaction(async (c) => {
        const forgotten = await q<{ failure_id: number; inbox_id: number }>(
          c,
          'DELETE FROM handler_failures WHERE failure_id = ANY($1::bigint[]) RETURNING failure_id, inbox_id',
          [ids],
        );
        await q(
          c,
          `UPDATE inbox SET handlers_pending = true, handlers_owner = NULL, handlers_lease_until = NULL
           WHERE inbox_id = ANY($1::bigint[]) AND state = 'projected'`,
          [forgotten.map((f) => f.inbox_id)],
        );
        const done = new Set(forgotten.map((f) => f.failure_id));
        return { retried: ids.filter((id) => done.has(id)), skipped: ids.filter((id) => !done.has(id)) };
      });
    },
    async select<T>(sql: string, parameters: readonly unknown[] = []) {
      return (await read(numbered(sql), [...parameters])) as T[];
    },
    ...postgresPresence(read),
    async setting(key) {
      const [row] = await read<{ value: string; updated_at: string }>('SELECT value, updated_at FROM settings WHERE key = $1', [key]);
      return row;
    },
    async settingOnce(key, value) {
      const inserted = await read<{ value: string; updated_at: string }>(
        'INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, now()) ON CONFLICT (key) DO NOTHING RETURNING value, updated_at',
        [key, value],
      );
      if (inserted[0] !== undefined) return { ...inserted[0], created: true };
      const [stored] = await read<{ value: string; updated_at: string }>('SELECT value, updated_at FROM settings WHERE key = $1', [key]);
      return { ...stored!, created: false };
    },
    async probe(): Promise<ReadinessProbe> {
      if (closed) return { ok: false, reason: 'closed' };
      try {
        // A real write, committed: a connection alone does not tell a read-only or full server.
        await inTransaction(async (c) => {
          await q(c, `INSERT INTO settings (key, value, updated_at) VALUES ('readiness_probe', 'ok', now())
                      ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at`);
        });
        return { ok: true };
      } catch (error) {
        const failure = unavailable(error);
        return { ok: false, reason: failure ? `${failure.code}: ${failure.message}` : (error as Error).message };
      }
    },
    async flush() {
      // A transaction that is given an id writes a commit record, and a synchronous commit waits
      // for the WAL to be flushed up to it: every earlier commit is on disk with it.
      await inTransaction(async (c) => void (await q(c, 'SELECT txid_current()')));
    },
    onWork(callback) {
      listeners.add(callback);
      listen();
      return () => {
        listeners.delete(callback);
      };
    },
    announceWork,
    async close() {
      if (closed) return;
      closed = true;
      listener?.release(true);
      listener = undefined;
      if (options.ownsPool) await pool.end().catch(() => undefined);
    },
  };
  return store;
}

