// `copy`: every account of one database into an empty one of either engine, table by table
// (tables.ts), read in one snapshot of the source and written in one transaction of the target,
// so that an interrupted copy leaves the target as empty as it found it. Identities, inbox ids,
// receive times, states, the change log's numbering and where each destination stands are
// copied as they are: a receiver started on the target goes on where the source's stopped.
import type { Keyring } from '../accounts/key-file.js';
import { isPostgresUrl } from '../store/open.js';
import { afterRows, beforeRows, copiedColumns, openSource, openTarget, refuseWhileWritten, type Source, type Target } from './engines.js';
import { TransferError } from './errors.js';
import { checkSealed } from './sealed.js';
import { COPIED_TABLES, type CopiedTable } from './tables.js';

/** What `copyDatabase` copied. */
export interface CopyReport {
  from: string;
  to: string;
  /** Rows copied, by table, in the order they were written. */
  tables: Record<string, number>;
  /** Sealed values checked under the accounts key (null: no key given, not checked). */
  sealedChecked: number | null;
  ms: number;
}

export interface CopyOptions {
  /** PostgreSQL: the schema of the tables, at whichever end is PostgreSQL. Default `public`. */
  schema?: string;
  /** The accounts key (its file and those beside it): every sealed value must open under it before anything is written. */
  keyring?: Keyring;
  /** Rows per batch. Default 1000. */
  batchSize?: number;
  /** Called after each batch with the table and the rows copied of it so far. */
  onProgress?: (table: string, rows: number) => void;
}

/** The tables of the target that already hold rows, other than those the migrations wrote. */
async function rowsAlreadyIn(target: Target): Promise<string[]> {
  const held: string[] = [];
  for (const table of COPIED_TABLES) {
    if (table.seeded) continue;
    const rows = await target.rows(`SELECT 1 AS present FROM "${table.name}" LIMIT 1`);
    if (rows.length > 0) held.push(table.name);
  }
  return held;
}

async function refuseUnlessEmpty(target: Target): Promise<void> {
  const held = await rowsAlreadyIn(target);
  if (held.length === 0) return;
  const events = held.includes('inbox') ? 'holds events' : `holds rows (${held.join(', ')})`;
  throw new TransferError(
    `the target ${target.location} ${events}: copy writes only into an empty database (a new one; the schema is created as migrate creates it). Nothing was written`,
  );
}

async function copyTable(source: Source, target: Target, table: CopiedTable, options: CopyOptions): Promise<number> {
  const names = copiedColumns(table);
  const kinds = names.map((n) => table.columns[n]!);
  if (table.seeded) await target.clear(table.name);
  let rows = 0;
  for await (const batch of source.batches({ table: table.name, names, kinds, order: table.order }, [], options.batchSize ?? 1000)) {
    try {
      await target.insert(table, names, batch);
    } catch (error) {
      throw new TransferError(`copying ${table.name} failed: ${(error as Error).message}. Nothing was written`, { cause: error });
    }
    rows += batch.length;
    options.onProgress?.(table.name, rows);
  }
  return rows;
}

/**
 * Copies every table of `from` into `to` (a SQLite path or a postgres:// URL each; the target
 * created and migrated if need be, and empty). Refused (TransferError) while a receiver runs on
 * either, when the target holds rows, or when a sealed value does not open under `keyring`.
 */
export async function copyDatabase(from: string, to: string, options: CopyOptions = {}): Promise<CopyReport> {
  const started = performance.now();
  if (from === to) throw new TransferError('--from and --to name the same database');
  const schema = options.schema === undefined ? {} : { schema: options.schema };
  const source = await openSource(from, isPostgresUrl(from) ? schema : {});
  try {
    await refuseWhileWritten(source, 'source');
    const sealedChecked = options.keyring === undefined ? null : await checkSealed(source, options.keyring);
    const target = await openTarget(to, COPIED_TABLES, isPostgresUrl(to) ? schema : {});
    try {
      await refuseWhileWritten(target, 'target');
      await refuseUnlessEmpty(target);
      await beforeRows(target);
      const tables: Record<string, number> = {};
      for (const table of COPIED_TABLES) tables[table.name] = await copyTable(source, target, table, options);
      await afterRows(target, COPIED_TABLES);
      await target.commit();
      return { from: source.location, to: target.location, tables, sealedChecked, ms: Math.round(performance.now() - started) };
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}
