import type { Delivery } from '../../receive/delivery.js';
import type { BulkLoad, BulkMode } from '../write-ports.js';
import type { SettledDelivery, Settlement, StoredEvent } from '../rows.js';
import type { ChangeRecord } from '../../tables/changes.js';
import type { RowWrites, StagedEffect } from '../../tables/stored.js';
import Database from 'better-sqlite3';
import { erasureInstants } from '../../events/index.js';
import { runWrite, serialised, writtenByOthers, type SqliteConnection, type Writer } from './connection.js';
import type { SqliteDatabase } from './database.js';
import { IdentitySet } from './identity-set.js';
import { prepareRecount, recount } from './counters.js';
import { PROJECTED_TABLES } from './projection.js';
import { bodyOf, storedBody, type StoredBody } from '../bodies.js';
import { identityText } from '../identities.js';
import { instantMs } from '../instants.js';

// Why a bulk load is fast: a random 64-character key inserted into a B-tree larger than the page
// cache dirties a page of its own, and every commit writes each dirty page to the WAL again. The
// batched path does that for the identity index and the candidates' keys on every batch, which is
// why its cost per event grows with the database. Here the random-order indexes are dropped, rows
// are appended (sequential pages), and the indexes are built once at the end, by sorting; the
// projected rows are inserted in key order.

// Pages of cache for each connection during a bulk load, in KiB (SQLite's negative form).
const BULK_CACHE = -2000;

// Row names a bulk load remembers in memory (about 100 bytes each).
const NAMED_IN_MEMORY = 50_000;

export interface BulkStatements {
  /** The account the load is for: a rebuild re-projects its rows only, a load into an empty database appends to it. */
  account: string;
  /** Inserts an accepted delivery already processed (replay's statement), its body stored as `body` if given; returns its inbox id. */
  appendSettled(row: SettledDelivery, at: string, body?: StoredBody): number;
  /** Inserts a body that is not an event as a dead letter, unless its bytes are stored (the unique index stays). */
  appendRefused(delivery: Delivery, body?: StoredBody): boolean;
  /** Writes the account's projected rows (insert for absent rows). */
  saveRows(writes: RowWrites): void;
  /** Numbers and records changes (a load into an empty database). */
  recordChanges(changes: readonly ChangeRecord[]): void;
  /** The feed's part of a rebuild (src/store/rebuild-changes.ts): its start around `empty`, which empties the projected rows. */
  startRebuild<T>(empty: () => T): Promise<T>;
  /** The feed's part at the end: the changes the new state makes, recorded. */
  finishRebuild(): Promise<number>;
}

/** Whether the inbox and the projected tables hold no row, of any account. */
function isEmpty(db: SqliteDatabase): boolean {
  return ['inbox', ...PROJECTED_TABLES].every((table) => db.prepare(`SELECT 1 FROM ${table} LIMIT 1`).get() === undefined);
}

/**
 * `Store.bulkLoad`: `work` as one bulk load, queued as a write transaction; undefined, having
 * done nothing, when mode 'empty' finds rows.
 */
export function loadInBulk<T>(
  connection: SqliteConnection,
  writer: Writer | undefined,
  statements: BulkStatements,
  mode: BulkMode,
  work: (bulk: BulkLoad) => Promise<T>,
): Promise<T | undefined> {
  // Into an empty database that no other connection has open, the load writes without the
  // WAL: new pages go straight to the file instead of to the WAL and again at the checkpoint
  // (11 % of a 1,000,000-event replay). A rollback journal with synchronous = FULL is as
  // durable, and an interrupted load is rolled back from it at the next open. The WAL comes
  // back as soon as the load ends. With another connection open, SQLite keeps the WAL. Once
  // another connection has committed to the file (and closed), it is kept too: leaving the WAL
  // then left this connection reading pages older than those commits (a UNIQUE violation, rows
  // the load read as absent), since outside the WAL a cached page is checked against a file
  // counter that commits in the WAL do not change.
  return serialised(connection, async () => {
    const walOff = mode === 'empty' && !writtenByOthers(connection) && journalMode(connection.db, 'delete');
    try {
      return await runWrite(connection, writer, () => bulkTransaction(connection.db, mode, statements, work), {});
    } finally {
      if (walOff) journalMode(connection.db, 'wal');
    }
  });
}

/** The body of the bulk load's transaction. */
async function bulkTransaction<T>(
  db: SqliteDatabase,
  mode: BulkMode,
  statements: BulkStatements,
  work: (bulk: BulkLoad) => Promise<T>,
): Promise<T | undefined> {
  if (mode === 'empty' && !isEmpty(db)) return undefined;
  // A load into an empty database records each row it makes as it saves it; a rebuild records
  // its difference from the state before at its end.
  const begin = () => beginBulk(db, mode, statements);
  const { bulk, finish, close } = mode === 'rebuild' ? await statements.startRebuild(begin) : begin();
  try {
    const result = await work(bulk);
    finish();
    if (mode === 'rebuild') await statements.finishRebuild();
    return result;
  } finally {
    close();
  }
}

/** Sets the journal mode; whether SQLite took it (it keeps WAL while others have the file open). */
function journalMode(db: SqliteDatabase, mode: 'delete' | 'wal'): boolean {
  try {
    return db.pragma(`journal_mode = ${mode}`, { simple: true }) === mode;
  } catch {
    return false;
  }
}

/** The named indexes of a table, with the SQL that makes them again. */
function indexesOf(db: SqliteDatabase, table: string, names?: readonly string[]): Array<{ name: string; sql: string }> {
  const all = db
    .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL")
    .all(table) as Array<{ name: string; sql: string }>;
  return names === undefined ? all : all.filter((index) => names.includes(index.name));
}

/**
 * Prepares a bulk load inside the caller's write transaction (which rolls everything back,
 * dropped indexes included, if anything throws), and returns it with `finish`, to be called
 * before the commit, and `close`, to be called in any case.
 */
function beginBulk(
  db: SqliteDatabase,
  mode: BulkMode,
  statements: BulkStatements,
): { bulk: BulkLoad; finish: () => void; close: () => void } {
  // A rebuild empties its account's projected rows only: other accounts' stay, and so do their
  // entries in the indexes dropped below, which are built again over every row.
  if (mode === 'rebuild')
    for (const table of PROJECTED_TABLES) db.prepare(`DELETE FROM ${table} WHERE account = ?`).run(statements.account);
  // Into an empty inbox the identity indexes go (repeats are told by `seen`) and so does the index
  // by handler key: they are built again by sorting. The other inbox indexes stay: they are
  // partial, and a settled row enters them only when its handlers are due. The candidates' index
  // by campaign is built again too.
  const dropped = [
    ...(mode === 'empty' ? indexesOf(db, 'inbox', ['inbox_identity', 'inbox_identity_undated', 'inbox_by_key']) : []),
    ...indexesOf(db, 'candidates'),
  ];
  for (const { name } of dropped) db.prepare(`DROP INDEX ${name}`).run();
  // One account's identities: `append` takes deliveries to the load's account only.
  const identityAt = db.prepare('SELECT identity FROM inbox WHERE inbox_id = ?').pluck();
  const seen = new IdentitySet((id) => identityText(identityAt.get(id)) ?? undefined);
  const scratch = openScratch();
  const cacheSize = db.pragma('cache_size', { simple: true }) as number;
  db.pragma(`cache_size = ${BULK_CACHE}`);
  return {
    bulk: bulkOperations(db, mode, statements, scratch, seen),
    finish() {
      for (const { sql } of dropped) db.prepare(sql).run();
      recount(prepareRecount(db), statements.account);
    },
    close() {
      scratch.close();
      db.pragma(`cache_size = ${cacheSize}`);
    },
  };
}

/**
 * Effects are kept in a scratch database of their own, on a second connection: SQLite sorts
 * them there (in bounded memory, spilling to its temporary files) and the sorted rows are read
 * while the projected rows are written on this connection, which one connection cannot do.
 * An empty file name is a private temporary file, which SQLite unlinks as soon as it is open
 * (it holds candidates' data) and which goes with the connection.
 */
function openScratch(): SqliteDatabase {
  const scratch = new Database('');
  try {
    scratch.pragma('journal_mode = OFF');
    scratch.pragma('synchronous = OFF');
    // Both caches small (SQLite's sorter holds as much): rows are appended, and read in order.
    scratch.pragma(`cache_size = ${BULK_CACHE}`);
    scratch.exec(`CREATE TABLE effects (tbl TEXT NOT NULL, key TEXT NOT NULL, version TEXT NOT NULL, body TEXT NOT NULL);
      CREATE TABLE named (tbl TEXT NOT NULL, key TEXT NOT NULL, version TEXT NOT NULL, PRIMARY KEY (tbl, key)) WITHOUT ROWID;
      BEGIN`);
    return scratch;
  } catch (error) {
    scratch.close();
    throw error;
  }
}

/** The account's accepted rows after `afterId`, oldest first, their bodies as received. */
function storedEvents(db: SqliteDatabase, account: string, afterId: number, limit: number): StoredEvent[] {
  return db
    .prepare(
      // `+account`: by the primary key from `afterId`, a page at a time. Left to choose, SQLite took
      // inbox_by_received (led by the account) and sorted every row of the account for each page.
      `SELECT inbox_id, raw, codec, identity, state, reasons FROM inbox WHERE +account = ? AND verdict = 'accepted' AND inbox_id > ?
       ORDER BY inbox_id LIMIT ${Math.trunc(limit)}`,
    )
    .all(account, afterId)
    .map((row) => {
      const { codec, ...event } = row as StoredEvent & { codec: number | null };
      return { ...event, raw: bodyOf(codec, event.raw), identity: identityText(event.identity) };
    });
}

/** The operations of a bulk load, on the database and its scratch; `seen` is dropped once the appends are over. */
function bulkOperations(
  db: SqliteDatabase,
  mode: BulkMode,
  statements: BulkStatements,
  scratch: SqliteDatabase,
  identities: IdentitySet,
): BulkLoad {
  let seen: IdentitySet | undefined = identities;
  const stageEffect = scratch.prepare('INSERT INTO effects (tbl, key, version, body) VALUES (?, ?, ?, ?)');
  // An effect that sets nothing only names its row (every candidate event names its campaign): one
  // mark per row, with the first event that names it (the feed's cause), not one per event. Rows
  // named are remembered, so most marks cost no statement; past the bound, the key ignores repeats.
  const stageName = scratch.prepare('INSERT OR IGNORE INTO named (tbl, key, version) VALUES (?, ?, ?)');
  const named = new Set<string>();
  const resettle = db.prepare('UPDATE inbox SET state = ?, reasons = ?, processed_at = ?, attempts = attempts + 1 WHERE inbox_id = ?');
  const replaceRaw = db.prepare('UPDATE inbox SET raw = ?, codec = ? WHERE inbox_id = ?');
  const { account } = statements;
  const ownAccount = (delivery: Delivery): void => {
    if (delivery.account !== account) throw new Error(`a bulk load of account ${account} was given a delivery to ${delivery.account}`);
  };

  return {
    append(rows, at) {
      if (mode !== 'empty') throw new Error('append is for a bulk load into an empty inbox');
      return rows.map((row) => {
        ownAccount('refused' in row ? row.refused : row.settled.delivery);
        if ('refused' in row) return statements.appendRefused(row.refused, row.body);
        const { identity } = row.settled.delivery;
        if (seen === undefined) throw new Error('append after sortedEffects');
        if (seen.find(identity) !== undefined) return false;
        seen.add(identity, statements.appendSettled(row.settled, at, row.body));
        return true;
      });
    },
    stage(effects) {
      for (const e of effects) {
        if (e.set === '') {
          const mark = `${e.table}\n${e.key}`;
          if (named.has(mark)) continue;
          if (named.size < NAMED_IN_MEMORY) named.add(mark);
          stageName.run(e.table, e.key, e.version);
        } else stageEffect.run(e.table, e.key, e.version, e.set);
      }
    },
    erasures: () =>
      erasureInstants(
        db.prepare('SELECT candidate_id, erased_at FROM erasures WHERE account = ?').all(account) as Array<{
          candidate_id: string;
          erased_at: string;
        }>,
      ),
    accepted: () => db.prepare("SELECT COUNT(*) FROM inbox WHERE account = ? AND verdict = 'accepted'").pluck().get(account) as number,
    events: (afterId, limit) => storedEvents(db, account, afterId, limit),
    resettle(settlements: readonly Settlement[], at) {
      const processedAt = instantMs(at);
      for (const s of settlements) {
        resettle.run(s.state, s.reasons === null ? null : JSON.stringify(s.reasons), processedAt, s.inboxId);
        // An erased candidate's event, redacted when processed (as `WriteTx.settle` does).
        if (s.raw !== undefined) {
          const body = storedBody(s.raw);
          replaceRaw.run(body.bytes, body.codec, s.inboxId);
        }
      }
    },
    *sortedEffects(chunk) {
      // Every row is appended by now: the identities' memory goes back before the projection's.
      seen = undefined;
      yield* sortedEffects(scratch, chunk);
    },
    saveRows: (writes) => statements.saveRows(writes),
    account,
    // A rebuild records its difference at its end (BulkStatements.finishRebuild).
    recordChanges: (changes) => {
      if (mode === 'empty') statements.recordChanges(changes);
    },
  };
}

/** The staged effects and names, sorted by table then key, `chunk` at a time. */
function* sortedEffects(scratch: SqliteDatabase, chunk: number): Generator<StagedEffect[]> {
  const sorted = scratch.prepare(
    `SELECT tbl, key, version, body FROM effects
         UNION ALL SELECT tbl, key, version, '' FROM named
         ORDER BY tbl, key`,
  );
  let rows: StagedEffect[] = [];
  for (const [table, key, version, set] of sorted.raw().iterate() as IterableIterator<[StagedEffect['table'], string, string, string]>) {
    rows.push({ table, key, version, set });
    if (rows.length >= chunk) {
      yield rows;
      rows = [];
    }
  }
  if (rows.length > 0) yield rows;
}
