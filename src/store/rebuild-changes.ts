// What a rebuild records in the feed (docs/projection.md section 10): the changes its new state
// differs by, and nothing else. Its start copies the account's projected rows (the columns of
// section 4) aside and notes the last `seq`; while it runs, its own batches record nothing; its
// end compares: a row whose columns differ from its copy, or that a change recorded meanwhile (a
// receiver projecting beside the rebuild) moved, is an upsert; a copied row now gone is an erase.
// Written once for both engines.
import type { EngineSql } from './engine-sql.js';
import { placeholders } from './engine-sql.js';
import type { ChangeEntity, ChangeRecord } from '../tables/changes.js';
import { CAMPAIGN_COLUMNS, CANDIDATE_COLUMNS, CREDITS_COLUMNS, decodeCandidate, type CandidateRow } from '../tables/rows.js';

/** `EngineSql` with statements that return nothing. */
export interface EngineWrites extends EngineSql {
  run(sql: string, parameters: readonly unknown[]): void | Promise<void>;
}

interface Copied {
  entity: ChangeEntity;
  table: string;
  /** The key column (`account` for credits: one row an account). */
  key: string;
  /** The columns of section 4 besides the key. */
  columns: readonly string[];
  /** The row as a change carries it. */
  toRow(row: Record<string, unknown>): Record<string, unknown>;
}

const COPIED: readonly Copied[] = [
  { entity: 'campaign', table: 'campaigns', key: 'campaign_id', columns: CAMPAIGN_COLUMNS, toRow: (row) => row },
  {
    entity: 'candidate',
    table: 'candidates',
    key: 'candidate_id',
    columns: CANDIDATE_COLUMNS.filter((c) => c !== 'added_at'),
    toRow: (row) => decodeCandidate(row) as Omit<CandidateRow, 'added_at'> as unknown as Record<string, unknown>,
  },
  { entity: 'credits', table: 'credits', key: 'account', columns: CREDITS_COLUMNS, toRow: ({ account: _, ...row }) => row },
];

/** The key and columns as a select list (the account once, for credits). */
function selectList(c: Copied): string {
  return c.key === 'account' ? ['account', ...c.columns].join(', ') : ['account', c.key, ...c.columns].join(', ');
}

/**
 * A rebuild's start, in the transaction that empties the projected rows, before it does: copies
 * the account's rows aside; returns where the feed stood, for `markRebuilding`.
 */
export async function copyForRebuild(sql: EngineWrites, account: string): Promise<number> {
  const p = (n: number) => sql.placeholder(n);
  const [head] = await sql.rows<{ last_seq: number | string }>(`SELECT last_seq FROM change_heads WHERE account = ${p(1)}`, [account]);
  for (const c of COPIED) {
    await sql.run(`DELETE FROM rebuild_${c.table} WHERE account = ${p(1)}`, [account]);
    await sql.run(`INSERT INTO rebuild_${c.table} (${selectList(c)}) SELECT ${selectList(c)} FROM ${c.table} WHERE account = ${p(1)}`, [
      account,
    ]);
  }
  return Number(head?.last_seq ?? 0);
}

/**
 * Notes that a rebuild runs, from `from` (what `copyForRebuild` returned): the last statement of
 * the rebuild's first transaction, since on PostgreSQL it holds the account's numbering until
 * the commit (nothing may wait on a lock after it).
 */
export async function markRebuilding(sql: EngineWrites, account: string, from: number): Promise<void> {
  await sql.run(
    `INSERT INTO change_heads (account, rebuilding_from) VALUES (${sql.placeholder(1)}, ${sql.placeholder(2)})
     ON CONFLICT (account) DO UPDATE SET rebuilding_from = excluded.rebuilding_from`,
    [account, from],
  );
}

/** The keys of a copied table whose rows differ from their copy, or are new, or are gone. */
async function differing(sql: EngineSql, c: Copied, account: string): Promise<{ moved: string[]; gone: string[] }> {
  const p = (n: number) => sql.placeholder(n);
  const keyOf = c.key === 'account' ? 'account' : c.key;
  const list = selectList(c);
  const moved = await sql.rows<{ key: string }>(
    `SELECT ${keyOf} AS key FROM (SELECT ${list} FROM ${c.table} WHERE account = ${p(1)}
       EXCEPT SELECT ${list} FROM rebuild_${c.table} WHERE account = ${p(2)}) AS differing`,
    [account, account],
  );
  const gone = await sql.rows<{ key: string }>(
    `SELECT ${keyOf} AS key FROM rebuild_${c.table} WHERE account = ${p(1)}
     EXCEPT SELECT ${keyOf} FROM ${c.table} WHERE account = ${p(2)}`,
    [account, account],
  );
  return { moved: moved.map((r) => r.key), gone: gone.map((r) => r.key) };
}

/** Rows of these keys as changes carry them, by key (absent: gone). */
async function rowsOf(sql: EngineSql, c: Copied, account: string, keys: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  const keyOf = c.key === 'account' ? 'account' : c.key;
  const rows = await sql.rows<Record<string, unknown>>(
    `SELECT ${selectList(c)} FROM ${c.table} WHERE account = ${sql.placeholder(1)} AND ${keyOf} IN (${placeholders(sql, keys.length, 2)})`,
    [account, ...keys],
  );
  for (const row of rows) found.set(String(row[keyOf]), c.toRow(c.key === 'account' ? row : (({ account: _, ...r }) => r)(row)));
  return found;
}

/**
 * A rebuild's end, in a transaction of its own after its last batch: finds the changes its new
 * state makes and hands them to `record` (the engine's numbering) 500 at a time; how many. The
 * copies go first: once numbering has begun, on PostgreSQL, nothing else may wait on a lock.
 * Nothing when no rebuild was started.
 */
export async function finishRebuildChanges(
  sql: EngineWrites,
  account: string,
  record: (changes: readonly ChangeRecord[]) => void | Promise<void>,
): Promise<number> {
  const p = (n: number) => sql.placeholder(n);
  const [head] = await sql.rows<{ rebuilding_from: number | string | null }>(
    `SELECT rebuilding_from FROM change_heads WHERE account = ${p(1)}`,
    [account],
  );
  if (head === undefined || head.rebuilding_from === null) return 0;
  const found: Array<{ c: Copied; keys: string[] }> = [];
  for (const c of COPIED) {
    const { moved, gone } = await differing(sql, c, account);
    const meanwhile = await sql.rows<{ id: string }>(
      `SELECT DISTINCT id FROM changes WHERE account = ${p(1)} AND entity = ${p(2)} AND seq > ${p(3)}`,
      [account, c.entity, Number(head.rebuilding_from)],
    );
    found.push({ c, keys: [...new Set([...moved, ...gone, ...meanwhile.map((r) => r.id)])].sort() });
    await sql.run(`DELETE FROM rebuild_${c.table} WHERE account = ${p(1)}`, [account]);
  }
  let recorded = 0;
  for (const { c, keys } of found) {
    for (let i = 0; i < keys.length; i += 500) {
      const chunk = keys.slice(i, i + 500);
      const rows = await rowsOf(sql, c, account, chunk);
      await record(
        chunk.map((key) => {
          const row = rows.get(key);
          return { entity: c.entity, id: key, op: row === undefined ? 'erase' : 'upsert', row: row ?? null, events: [] };
        }),
      );
      recorded += chunk.length;
    }
  }
  await sql.run(`UPDATE change_heads SET rebuilding_from = NULL WHERE account = ${p(1)}`, [account]);
  return recorded;
}
