// What a stored event costs in pages, as the database grows (bench/scale.ts): inserts shaped as
// the receiver's (an intake commit of pending rows, then a projection commit that settles them and
// adds their candidates), made with SQL on a copy, with the WAL left unchecked so that every page
// each commit wrote stays in it. Each WAL frame's page is then named by SQLite's dbstat table
// (which b-tree, table or index, owns the page), in the same pass that measures each b-tree's
// bytes: the pages each index costs per insert, and the bytes each part of the database holds.
import { randomBytes, randomUUID } from 'node:crypto';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';

export interface InsertCost {
  inserts: number;
  batchSize: number;
  /** Wall ms per insert, intake and projection commits included (synchronous = FULL, as serve). */
  msPerInsert: number;
  /** WAL frames (pages written) per insert, and by b-tree. */
  pagesPerInsert: number;
  pagesPerInsertByBtree: Record<string, number>;
}

export interface BtreeBytes {
  name: string;
  /** The table a b-tree belongs to (an index's table, or itself). */
  table: string;
  pages: number;
  bytes: number;
  payload: number;
  unused: number;
}

type Db = InstanceType<typeof Database>;

/** Frames of a WAL file by page number. */
function walFrames(file: string, pageSize: number): Map<number, number> {
  const frames = new Map<number, number>();
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return frames;
  }
  const fd = openSync(file, 'r');
  try {
    const header = Buffer.alloc(24);
    for (let offset = 32; offset + 24 + pageSize <= size; offset += 24 + pageSize) {
      readSync(fd, header, 0, 24, offset);
      const page = header.readUInt32BE(0);
      frames.set(page, (frames.get(page) ?? 0) + 1);
    }
  } finally {
    closeSync(fd);
  }
  return frames;
}

/** Statements that copy a stored candidate.added and its candidate under new keys, as a new event would be stored. */
function prepareInserts(db: Db) {
  const template = db.prepare("SELECT inbox_id FROM inbox WHERE kind = 'candidate.added' AND state = 'projected' LIMIT 1").pluck().get() as
    number | undefined;
  if (template === undefined) throw new Error('no projected candidate.added to copy');
  const candidates = db.prepare('SELECT MAX(rowid) FROM candidates').pluck().get() as number;
  const lastEventAt = (db.prepare('SELECT MAX(event_at) FROM inbox').pluck().get() as number | null) ?? Date.now();
  const compact = db.prepare("SELECT 1 FROM pragma_table_info('inbox') WHERE name = 'codec'").get() !== undefined;
  const typed = db.prepare("SELECT 1 FROM pragma_table_info('inbox') WHERE name = 'handler_key' AND type = 'BLOB'").get() !== undefined;
  return {
    template,
    candidates,
    lastEventAt,
    // The compact inbox (migration 24) keeps the body's codec and campaign beside it, and the identity as bytes.
    compact,
    // Since migration 26: handler keys as bytes (a candidate's UUID: 01 and its 16 bytes, as
    // src/store/handler-keys.ts writes it) and the instants as Unix ms.
    keyOf: (candidate: string): Buffer | string =>
      typed ? Buffer.concat([Buffer.of(1), Buffer.from(candidate.replaceAll('-', ''), 'hex')]) : `candidate:${candidate}`,
    now: (): number | string => (typed ? Date.now() : new Date().toISOString()),
    intake: db.prepare(
      compact
        ? `INSERT INTO inbox (account, received_at, raw, codec, campaign_id, identity, event_at, kind, handler_key, verdict, secret_id, state)
           SELECT account, ?, raw, codec, campaign_id, ?, ?, kind, ?, verdict, secret_id, 'pending' FROM inbox WHERE inbox_id = ? RETURNING inbox_id`
        : `INSERT INTO inbox (account, received_at, raw, identity, event_at, kind, handler_key, verdict, secret_id, state)
           SELECT account, ?, raw, ?, ?, kind, ?, verdict, secret_id, 'pending' FROM inbox WHERE inbox_id = ? RETURNING inbox_id`,
    ),
    campaignOf: db.prepare('SELECT campaign_id FROM candidates WHERE rowid >= ? LIMIT 1').pluck(),
    settle: db.prepare("UPDATE inbox SET state = 'projected', processed_at = ?, attempts = attempts + 1 WHERE inbox_id = ?"),
    project: db.prepare(
      `INSERT INTO candidates (account, candidate_id, campaign_id, first_name, last_name, email, phone, is_sourced, call_queued, sms_sent,
         status, added_at, field_versions)
       SELECT account, ?, ?, first_name, last_name, email, phone, is_sourced, call_queued, sms_sent, 'pending', added_at,
         field_versions FROM candidates WHERE rowid >= ? LIMIT 1`,
    ),
  };
}

/**
 * `batches` × `batchSize` inserts on `file` (a copy: it keeps them), each batch an intake commit
 * then a projection commit; the connection stays open for `afterwards` (which sees the WAL).
 */
export function measureInserts<T>(
  file: string,
  { batches, batchSize }: { batches: number; batchSize: number },
  afterwards: (db: Db, frames: Map<number, number>) => T,
): { cost: Omit<InsertCost, 'pagesPerInsertByBtree'>; result: T } {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('wal_autocheckpoint = 0');
    db.pragma('wal_checkpoint(TRUNCATE)');
    const s = prepareInserts(db);
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    let n = 0;
    const started = performance.now();
    for (let b = 0; b < batches; b++) {
      const ids: number[] = [];
      db.transaction(() => {
        for (let i = 0; i < batchSize; i++, n++) {
          const candidate = randomUUID();
          const row = s.intake.get(
            s.now(),
            s.compact ? randomBytes(32) : randomBytes(32).toString('hex'),
            s.lastEventAt + n * 1000,
            s.keyOf(candidate),
            s.template,
          ) as { inbox_id: number };
          ids.push(row.inbox_id);
        }
      })();
      // A batch's candidates join one campaign (a live campaign takes its candidates together),
      // each a copy of a stored candidate for its columns' sizes.
      const campaign = s.campaignOf.get(1 + Math.floor(Math.random() * s.candidates)) as string;
      db.transaction(() => {
        const at = s.now();
        for (const id of ids) {
          s.settle.run(at, id);
          s.project.run(randomUUID(), campaign, 1 + Math.floor(Math.random() * s.candidates));
        }
      })();
    }
    const elapsed = performance.now() - started;
    const frames = walFrames(`${file}-wal`, pageSize);
    const total = [...frames.values()].reduce((a, b) => a + b, 0);
    const inserts = batches * batchSize;
    const cost = { inserts, batchSize, msPerInsert: elapsed / inserts, pagesPerInsert: total / inserts };
    return { cost, result: afterwards(db, frames) };
  } finally {
    db.close();
  }
}

/**
 * One walk of every b-tree (dbstat): the bytes of each, and the owner of each page in `frames`,
 * from which the pages each b-tree cost per insert.
 */
export function walkBtrees(
  db: Db,
  frames: Map<number, number>,
  inserts: number,
): { btrees: BtreeBytes[]; pagesPerInsertByBtree: Record<string, number> } {
  const tables = new Map(
    (
      db.prepare("SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')").all() as Array<{
        name: string;
        tbl_name: string;
      }>
    ).map((r) => [r.name, r.tbl_name]),
  );
  const byName = new Map<string, BtreeBytes>();
  const written = new Map<string, number>();
  const rows = db.prepare('SELECT name, pageno, payload, unused, pgsize FROM dbstat').raw().iterate() as IterableIterator<
    [string, number, number, number, number]
  >;
  for (const [name, pageno, payload, unused, pgsize] of rows) {
    let b = byName.get(name);
    if (b === undefined) byName.set(name, (b = { name, table: tables.get(name) ?? name, pages: 0, bytes: 0, payload: 0, unused: 0 }));
    b.pages++;
    b.bytes += pgsize;
    b.payload += payload;
    b.unused += unused;
    const f = frames.get(pageno);
    if (f !== undefined) written.set(name, (written.get(name) ?? 0) + f);
  }
  // Pages in no b-tree: the header page, the freelist, pages the WAL wrote that are free now.
  const owned = [...written.values()].reduce((a, b) => a + b, 0);
  const all = [...frames.values()].reduce((a, b) => a + b, 0);
  if (all > owned) written.set('(header, freelist)', all - owned);
  return {
    btrees: [...byName.values()].sort((a, b) => b.bytes - a.bytes),
    pagesPerInsertByBtree: Object.fromEntries(
      [...written].sort((a, b) => b[1] - a[1]).map(([name, f]) => [name, Math.round((f / inserts) * 100) / 100]),
    ),
  };
}

/** Mean bytes of each inbox column, over a sample of rows read by id (not a scan). */
export function inboxColumnBytes(db: Db, sample: number): Record<string, number> {
  const max = db.prepare('SELECT MAX(inbox_id) FROM inbox').pluck().get() as number | null;
  if (max === null) return {};
  const columns = (db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('inbox') as string[]).filter((c) => c !== 'inbox_id');
  const row = db.prepare(`SELECT ${columns.map((c) => `length(${c}) AS ${c}`).join(', ')} FROM inbox WHERE inbox_id = ?`);
  const sums: Record<string, number> = Object.fromEntries(columns.map((c) => [c, 0]));
  let rows = 0;
  for (let i = 0; i < sample; i++) {
    const found = row.get(1 + Math.floor(Math.random() * max)) as Record<string, number | null> | undefined;
    if (found === undefined) continue;
    rows++;
    for (const c of columns) sums[c]! += found[c] ?? 0;
  }
  return Object.fromEntries(columns.map((c) => [c, rows === 0 ? 0 : Math.round((sums[c]! / rows) * 10) / 10]));
}
