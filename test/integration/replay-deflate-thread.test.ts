// A long bulk replay deflates its bodies on a thread (store/body-deflater.ts): the rows it stores
// are byte for byte those of a replay without it, and a thread that fails fails the replay,
// leaving the database empty, never a row without its body.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { replay } from '../../src/replay/index.js';
import { storedBody } from '../../src/store/bodies.js';
import { received } from '../support/bodies.js';

// Where the thread's module is, counted and, for the failures below, replaced by a module of the test's.
const thread = vi.hoisted(() => ({ started: 0, module: undefined as URL | undefined }));
vi.mock('../../src/threads.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/threads.js')>();
  return {
    ...original,
    threadModule: (from: string, file: string) => {
      if (file !== 'body-thread.js') return original.threadModule(from, file);
      thread.started++;
      return thread.module ?? original.threadModule(from, file);
    },
  };
});

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'prequal-deflate-thread-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(() => {
  thread.started = 0;
  thread.module = undefined;
});

const ERASED = 'cand_7';

/** `count` events (every 50th a repeat, every 97th a body that is not an event), after a dump's erasure of one candidate. */
function input(name: string, count: number): string {
  const lines = [JSON.stringify({ 'prequal-hooks:erasure': { candidate_id: ERASED, erased_at: '2027-01-01T00:00:00.000Z' } })];
  for (let i = 0; i < count; i++) {
    const n = i % 50 === 49 ? i - 1 : i;
    if (i % 97 === 96) lines.push(`{"not": "an envelope", "n": ${i}}`);
    else
      lines.push(
        JSON.stringify({
          event: 'candidate.added',
          timestamp: new Date(Date.UTC(2026, 10, 20) + n * 1000).toISOString(),
          data: { campaign_id: `cmp_${n % 7}`, candidate_id: `cand_${n % 3000}`, first_name: 'Éloïse', email: `c${n}@exemple.fr` },
        }),
      );
  }
  const file = join(dir, name);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

function inbox(path: string): Array<{ codec: number | null; raw: Buffer }> {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT codec, raw FROM inbox ORDER BY inbox_id').all() as Array<{ codec: number | null; raw: Buffer }>;
  } finally {
    db.close();
  }
}

/** A thread module of the test's: `onMessage` is the body of its message handler, given `request`. */
function threadModule(name: string, onMessage: string): URL {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(file, `import { parentPort } from 'node:worker_threads';\nparentPort.on('message', (request) => { ${onMessage} });\n`);
  return pathToFileURL(file);
}

describe('a bulk replay with its bodies deflated on a thread', () => {
  it('stores the bytes a replay without the thread stores, an erased candidate redacted', async () => {
    const file = input('events.ndjson', 12_000);
    const threaded = join(dir, 'threaded.db');
    const batched = join(dir, 'batched.db');
    const summary = await replay(file, { database: threaded });
    expect(thread.started).toBe(1);
    expect(await replay(file, { database: batched, bulk: false })).toEqual(summary);
    expect(thread.started).toBe(1);
    expect(summary).toMatchObject({ received: 12_000, erasures: 1 });
    expect(summary.dead).toBeGreaterThan(100);
    expect(summary.duplicates).toBeGreaterThan(200);

    const rows = inbox(threaded);
    expect(rows).toEqual(inbox(batched));
    // Each as storedBody makes it of the bytes received; the erased candidate's bodies as redacted, not as read.
    for (const row of rows) expect(storedBody(received(row))).toEqual({ codec: row.codec, bytes: row.raw });
    const bodies = rows.map((row) => received(row).toString('utf8'));
    expect(bodies.filter((body) => body.includes(`"${ERASED}"`)).length).toBeGreaterThan(0);
    expect(bodies.filter((body) => body.includes('"Éloïse"')).length).toBeLessThan(rows.length - summary.dead);
  });

  it('starts no thread for a short replay', async () => {
    const summary = await replay(input('short.ndjson', 300), { database: join(dir, 'short.db') });
    expect(summary.received).toBe(300);
    expect(thread.started).toBe(0);
  });

  it.each([
    ['exits', 'process.exit(3);', /the thread deflating bodies exited \(code 3\) before it answered/],
    ['throws', "throw new Error('out of zlib');", /the thread deflating bodies failed: out of zlib/],
    [
      'answers an error',
      "parentPort.postMessage({ id: request.id, ok: false, error: { name: 'Error', message: 'disk on fire' } });",
      /the thread deflating bodies failed: disk on fire/,
    ],
    [
      'answers fewer bodies',
      'parentPort.postMessage({ id: request.id, ok: true, bodies: { bytes: new ArrayBuffer(0), ends: new Uint32Array(0), codecs: new Uint8Array(0) } });',
      /the thread deflating bodies answered 0 bodies for 500/,
    ],
  ])('fails the replay when the thread %s, and stores nothing', async (name, onMessage, message) => {
    thread.module = threadModule(name.replaceAll(' ', '-'), onMessage);
    const database = join(dir, `${name.replaceAll(' ', '-')}.db`);
    await expect(replay(input(`${name}.ndjson`, 8_000), { database })).rejects.toThrow(message);
    expect(thread.started).toBe(1);
    expect(inbox(database)).toEqual([]);
  });
});
