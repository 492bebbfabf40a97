import { afterAll, describe, expect, it } from 'vitest';
import { eventIdentity } from '../../src/events/index.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { killChildren, readDb, startServe } from '../support/cli-process.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';
import { identityText } from '../../src/store/identities.js';

const SECRET = 'whsec_crash_3b7a';

describe('a receiver killed with SIGKILL under concurrent load', () => {
  const tmp = tempDir();
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });

  it('has every acknowledged event in its inbox after restart, and projects them', async () => {
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', tmp.dbPath, '--secret', SECRET, '--log-level', 'warn']);
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
          const response = await fetch(serve.webhookUrl, { method: 'POST', headers: request.headers, body: request.body });
          if (response.status === 200) acknowledged.add(eventIdentity(event));
          await response.arrayBuffer();
        } catch {
          return; // connection cut by the kill: not acknowledged, the sender would retry
        }
      }
    };
    const load = Array.from({ length: 16 }, (_, w) => worker(w));
    // Kill once a good number of acknowledgements are in, in the middle of the load.
    await waitFor(() => acknowledged.size >= 300, 20_000, 'three hundred acknowledgements', { everyMs: 10 });
    // The senders keep going until the process is gone, so requests are cut off mid-flight.
    expect(await serve.stop('SIGKILL')).toBe(null);
    killed = true;
    await Promise.all(load);
    expect(sent).toBeGreaterThan(acknowledged.size);

    const stored = new Set(readDb(tmp.dbPath, (db) => db.prepare('SELECT identity FROM inbox').pluck().all().map(identityText)));
    const lost = [...acknowledged].filter((identity) => !stored.has(identity));
    expect(lost).toEqual([]);

    // Restarted on the same file, the receiver projects whatever the killed one had not.
    const again = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', tmp.dbPath, '--secret', SECRET, '--log-level', 'warn']);
    await waitFor(
      () =>
        readDb(tmp.dbPath, (db) => db.prepare("SELECT COUNT(*) FROM inbox WHERE state = 'pending'").pluck().get()) === 0 ? true : undefined,
      10_000,
      'the restarted receiver to project the pending events',
    );
    const projected = readDb(tmp.dbPath, (db) => db.prepare("SELECT COUNT(*) FROM candidates WHERE status = 'completed'").pluck().get());
    expect(projected).toBe(stored.size);
    expect(await again.stop('SIGTERM')).toBe(0);
  });
});
