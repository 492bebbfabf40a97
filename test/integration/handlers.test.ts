import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { WebhookEvent } from '../../src/events/index.js';
import { createLogger } from '../../src/logging.js';
import { createReceiver, type Receiver } from '../../src/receiver/create-receiver.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';

import { tempDir } from '../support/servers.js';
import { sqlOn } from '../support/sql.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'whsec_handlers_77e2';
const INVALID = join(import.meta.dirname, '../../fixtures/invalid');

describe('application handlers, dead letters and reprocessing', () => {
  const open: Array<{ receiver: Receiver; cleanup?: () => void }> = [];
  afterEach(async () => {
    for (const { receiver, cleanup } of open.splice(0)) {
      await receiver.close(1000);
      cleanup?.();
    }
  });

  function start(dbPath?: string, dispatch = { handlerRetryDelayMs: 5, handlerAttempts: 3 }) {
    const tmp = dbPath === undefined ? tempDir() : undefined;
    const receiver = createReceiver({
      database: dbPath ?? tmp!.dbPath,
      secret: SECRET,
      logger: createLogger({ level: 'silent' }),
      dispatch,
    });
    open.push({ receiver, ...(tmp && { cleanup: tmp.cleanup }) });
    return { receiver, dbPath: dbPath ?? tmp!.dbPath };
  }

  const deliver = (receiver: Receiver, event: unknown) => {
    const request = signedRequest(event, { secret: SECRET });
    return receiver.receive({ rawBody: request.body, headers: request.headers });
  };

  it('calls a typed handler once per distinct event, after the projection committed, with the projected row', async () => {
    // The store on a connection of the test's own, whose setting is read after the projection.
    const tmp = tempDir();
    const db = new Database(tmp.dbPath);
    const receiver = createReceiver({
      database: db,
      secret: SECRET,
      logger: createLogger({ level: 'silent' }),
      dispatch: { handlerRetryDelayMs: 5, handlerAttempts: 3 },
    });
    open.push({ receiver, cleanup: () => (db.close(), tmp.cleanup()) });
    const seen: Array<{ score: number; status: unknown; identity: string }> = [];
    receiver.on('candidate.interview.completed', (event, context) => {
      // Typed: interview_score is a number, the row a candidate row.
      seen.push({ score: event.data.interview_score, status: context.row?.status, identity: context.identity });
    });
    const event = sampleEvent('candidate.interview.completed', { data: { interview_score: 9.5 } });
    await deliver(receiver, event);
    await deliver(receiver, event); // duplicate
    await deliver(receiver, JSON.stringify(event, null, 2)); // duplicate in other bytes
    await receiver.drain();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ score: 9.5, status: 'completed' });
    // Projection batches commit without their own fsync; the intake's commits keep it.
    expect(db.pragma('synchronous')).toEqual([{ synchronous: 2 }]);
  });

  it('calls handlers in arrival order per candidate, whatever the timestamps', async () => {
    const { receiver } = start();
    const calls: string[] = [];
    receiver.onAny(async (event) => {
      // eslint-disable-next-line no-restricted-syntax -- handlers that take varying time: the interleaving is the scenario
      await new Promise((r) => setTimeout(r, Math.random() * 5));
      calls.push(`${(event.data as { candidate_id?: string }).candidate_id}:${event.event}`);
    });
    const kinds = ['candidate.interview.completed', 'candidate.added', 'candidate.interview.started'] as const;
    for (const candidate of ['a', 'b']) {
      for (const [i, kind] of kinds.entries()) {
        // Later arrivals carry earlier timestamps.
        await deliver(receiver, sampleEvent(kind, { timestamp: `2026-11-20T10:0${5 - i}:00Z`, data: { candidate_id: candidate } }));
      }
    }
    await receiver.drain();
    for (const candidate of ['a', 'b']) {
      expect(calls.filter((c) => c.startsWith(`${candidate}:`))).toEqual(kinds.map((k) => `${candidate}:${k}`));
    }
  });

  it('retries a failing handler with backoff, then records a dead letter, without blocking others', async () => {
    const { receiver } = start();
    const attempts: number[] = [];
    let flakyCalls = 0;
    const credits: unknown[] = [];
    receiver.on(
      'candidate.added',
      (_event, context) => {
        attempts.push(context.attempt);
        throw new Error('CRM is down');
      },
      { name: 'push-to-crm' },
    );
    receiver.on('candidate.sourced', () => {
      flakyCalls++;
      if (flakyCalls < 3) return Promise.reject(new Error('flaky'));
      return undefined;
    });
    receiver.on('credits.low', (event) => void credits.push(event.data.credits_remaining));
    await deliver(receiver, sampleEvent('candidate.added'));
    await deliver(receiver, sampleEvent('candidate.sourced'));
    await deliver(receiver, sampleEvent('credits.low'));
    await receiver.drain();
    expect(attempts).toEqual([1, 2, 3]);
    expect(flakyCalls).toBe(3);
    expect(credits).toHaveLength(1);
    // The projection went on regardless.
    expect(await receiver.counts()).toMatchObject({ projected: 3, pending: 0 });
    const failures = (await receiver.deadLetters.list()).filter((d) => d.type === 'handler');
    expect(failures).toEqual([
      expect.objectContaining({ type: 'handler', handler: 'push-to-crm', attempts: 3, error: 'Error: CRM is down' }),
    ]);

    // Once the CRM is back, the failed handler call can be retried.
    const retried = await receiver.deadLetters.retryHandlers('all');
    expect(retried.retried).toHaveLength(1);
    await receiver.drain();
    expect(attempts).toEqual([1, 2, 3, 1, 2, 3]);
  });

  it('runs handlers again after a stop before they finished (at least once)', async () => {
    const tmp = tempDir();
    const first = start(tmp.dbPath);
    let release!: () => void;
    first.receiver.on('candidate.added', () => new Promise<void>((resolve) => (release = resolve)));
    await deliver(first.receiver, sampleEvent('candidate.added'));
    // Wait until the handler is running, then stop before it finishes.
    await waitFor(() => release, 5000, 'the handler to start');
    await first.receiver.close(50);
    release();

    const second = start(tmp.dbPath);
    const calls: WebhookEvent[] = [];
    second.receiver.on('candidate.added', (event) => void calls.push(event));
    await second.receiver.drain();
    expect(calls).toHaveLength(1);
    await second.receiver.close();
    tmp.cleanup();
  });

  it('keeps unknown kinds and invalid data as dead letters with reasons, reprocessable (idempotent, and once mended)', async () => {
    const { receiver, dbPath } = start();
    for (const file of ['unknown-kind.json', 'invalid-data.json', 'bad-timestamp.json']) {
      const result = await deliver(receiver, readFileSync(join(INVALID, file), 'utf8'));
      expect(result.answer.status).toBe(200);
    }
    await receiver.drain();
    const letters = await receiver.deadLetters.list();
    expect(letters.map((d) => (d.type === 'event' ? d.state : d.type))).toEqual(['unknown', 'dead', 'dead']);
    const invalid = letters[1]!;
    expect(invalid.type === 'event' && invalid.reasons.map((r) => r.path)).toEqual(
      expect.arrayContaining(['data.interview_score', 'data.candidate_id']),
    );
    const badTime = letters[2]!;
    expect(badTime.type === 'event' && badTime.reasons.map((r) => r.path)).toContain('timestamp');

    expect((await receiver.deadLetters.reprocess('all')).requeued).toHaveLength(3);
    await receiver.drain();
    expect(await receiver.counts()).toMatchObject({ unknown: 1, dead: 2, pending: 0 });

    // An operator mends the stored body, then reprocesses that one event.
    const mended = JSON.parse(badTime.type === 'event' ? badTime.body : '{}');
    mended.timestamp = '2026-11-20T10:00:00+01:00';
    await sqlOn(dbPath).query('UPDATE inbox SET raw = ?, codec = 0 WHERE inbox_id = ?', [
      Buffer.from(JSON.stringify(mended)),
      badTime.type === 'event' ? badTime.inbox_id : 0,
    ]);
    expect((await receiver.deadLetters.reprocess([badTime.type === 'event' ? badTime.inbox_id : 0])).requeued).toHaveLength(1);
    await receiver.drain();
    expect(await receiver.counts()).toMatchObject({ unknown: 1, dead: 1, projected: 1 });
    expect((await receiver.query.getCandidate(mended.data.candidate_id))?.status).toBe('pending');
  });

  it('replays fixtures through the same path, with handlers, from objects, .json and .ndjson', async () => {
    const { receiver } = start();
    const kinds: string[] = [];
    receiver.onAny((event) => void kinds.push(event.event));
    const fixtures = join(import.meta.dirname, '../../fixtures');
    const summary = await receiver.replay([
      join(fixtures, 'events'),
      join(fixtures, 'scenarios/campaign-lifecycle.ndjson'),
      sampleEvent('credits.low', { data: { credits_remaining: 3 } }),
      join(INVALID, 'not-json.txt'),
    ]);
    expect(summary).toMatchObject({ received: 10 + 46 + 1 + 1, duplicates: 0, projected: 57, dead: 1, unknown: 0 });
    await receiver.drain();
    expect(kinds).toHaveLength(57);
    const again = await receiver.replay(join(fixtures, 'scenarios/campaign-lifecycle.shuffled.ndjson'));
    expect(again).toMatchObject({ received: 55, duplicates: 55, projected: 0 });
  });
});
