import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { eventIdentity } from '../../src/events/index.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { startServe, type ServeProcess } from '../support/serve-process.js';
import { tempDir } from '../support/servers.js';

const SECRET = 'whsec_crash_3b7a';

describe('a receiver killed with SIGKILL under concurrent load', () => {
  const tmp = tempDir();
  const children: ServeProcess[] = [];
  afterAll(() => {
    for (const c of children) c.child.kill('SIGKILL');
    tmp.cleanup();
  });

  it('has every acknowledged event in its inbox after restart, and projects them', async () => {
    const serve = await startServe(['--db', tmp.dbPath, '--secret', SECRET, '--log-level', 'warn']);
    children.push(serve);
    const acknowledged = new Set<string>();
    let sent = 0;
    let killed = false;

    const worker = async (w: number) => {
      for (let i = 0; !killed; i++) {
        const event = sampleEvent('candidate.interview.completed', {
          timestamp: new Date(Date.UTC(2026, 10, 20, 10) + w * 100_000 + i).toISOString(),
          data: { candidate_id: `cand-${w}-${i}`, interview_score: (i % 21) / 2 },
        });
        const request = signedRequest(event, { secret: SECRET });
        sent++;
        try {
          const response = await fetch(`${serve.url}/webhooks`, { method: 'POST', headers: request.headers, body: request.body });
          if (response.status === 200) acknowledged.add(eventIdentity(event));
          await response.arrayBuffer();
        } catch {
          return; // connection cut by the kill: not acknowledged, the sender would retry
        }
      }
    };
    const load = Array.from({ length: 16 }, (_, w) => worker(w));
    // Kill once a good number of acknowledgements are in, in the middle of the load.
    while (acknowledged.size < 300) await new Promise((r) => setTimeout(r, 10));
    serve.child.kill('SIGKILL');
    killed = true;
    await Promise.all(load);
    expect(await serve.exited).toBe(null);
    expect(sent).toBeGreaterThan(acknowledged.size);

    const db = new Database(tmp.dbPath, { readonly: true });
    const stored = new Set(db.prepare('SELECT identity FROM inbox').pluck().all() as string[]);
    db.close();
    const lost = [...acknowledged].filter((identity) => !stored.has(identity));
    expect(lost).toEqual([]);

    // Restarted on the same file, the receiver projects whatever the killed one had not.
    const again = await startServe(['--db', tmp.dbPath, '--secret', SECRET, '--log-level', 'warn']);
    children.push(again);
    const deadline = Date.now() + 10_000;
    let pending = -1;
    let projected = 0;
    while (Date.now() < deadline) {
      const reader = new Database(tmp.dbPath, { readonly: true });
      pending = reader.prepare("SELECT COUNT(*) FROM inbox WHERE state = 'pending'").pluck().get() as number;
      projected = reader.prepare("SELECT COUNT(*) FROM candidates WHERE status = 'completed'").pluck().get() as number;
      reader.close();
      if (pending === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(pending).toBe(0);
    expect(projected).toBe(stored.size);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  });
});
