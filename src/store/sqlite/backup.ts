// An online copy of a SQLite database (`prequal-hooks backup`).
//
// `VACUUM INTO` rather than the page-by-page backup API: the backup API restarts from the first
// page whenever another process writes between two of its steps, so under a steady stream of
// webhooks it may never finish; VACUUM INTO copies from one read snapshot (WAL readers do not
// stop writers) in one statement, and writes a compact file holding no free pages, so no bytes
// of erased candidates either (docs/projection.md section 8).
import Database from 'better-sqlite3';

/** What `copyDatabaseFile` found in the copy: its events, or the integrity check's complaint. */
export type CopyCheck = { ok: true; events: number } | { ok: false; problem: string };

/**
 * Copies the database file `from` to `to` (which must not exist) from one snapshot, while other
 * processes go on writing to it, then checks the copy (PRAGMA integrity_check) and counts its
 * stored events. The file is created with the process's umask: the caller sets it.
 */
export function copyDatabaseFile(from: string, to: string): CopyCheck {
  const source = new Database(from, { readonly: true, fileMustExist: true });
  try {
    source.pragma('busy_timeout = 10000');
    source.prepare('VACUUM INTO ?').run(to);
  } finally {
    source.close();
  }
  const copy = new Database(to, { readonly: true, fileMustExist: true });
  try {
    const check = copy.pragma('integrity_check', { simple: true });
    if (check !== 'ok') return { ok: false, problem: String(check) };
    return { ok: true, events: copy.prepare('SELECT COUNT(*) FROM inbox').pluck().get() as number };
  } finally {
    copy.close();
  }
}
