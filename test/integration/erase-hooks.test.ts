// onErase hooks on every engine: at least once per erasure, whoever erased (this receiver, another
// process, retention, before the hook existed), retried within a round and in later rounds, and
// given back to another process when this one stops in the middle of a call.
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging.js';
import { createReceiver, eraseCandidate, type ErasedCandidate, type Receiver } from '../../src/index.js';
import { sampleEvent } from '../../src/testing/index.js';
import { ENGINES, type EngineUnderTest } from '../support/engines.js';
import { sqlOn } from '../support/sql.js';
import { waitFor } from '../support/wait-for.js';

const quiet = createLogger({ level: 'silent' });

function people(...ids: string[]) {
  return ids.map((id, i) =>
    sampleEvent('candidate.added', {
      timestamp: `2026-01-10T09:0${i}:00.000Z`,
      data: { campaign_id: 'cmp_hooks', candidate_id: id, email: `${id}@example.org`, first_name: 'Hook', last_name: 'Person' },
    }),
  );
}

describe.each(ENGINES)('onErase hooks on $name', (engine: EngineUnderTest) => {
  const open: Receiver[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((r) => r.close()));
  });
  const receiverOn = (database: string, extra: Partial<Parameters<typeof createReceiver>[0]> = {}) => {
    const r = createReceiver({ database, allowUnsigned: true, logger: quiet, ...extra });
    open.push(r);
    return r;
  };
  const owed = (database: string) =>
    sqlOn(database).query<{ erasure_id: number; rounds: number; last_error: string | null }>(
      'SELECT erasure_id, rounds, last_error FROM erasure_hooks ORDER BY erasure_id',
    );

  it('calls every hook once per erasure with ids and the reason only, and owes nothing after', async () => {
    const { database } = await engine.fresh();
    const receiver = receiverOn(database);
    const crm: ErasedCandidate[] = [];
    const mailing: string[] = [];
    receiver.onErase((erasure) => void crm.push(erasure), { name: 'crm' });
    receiver.onErase((erasure) => void mailing.push(erasure.candidateId), { name: 'mailing' });
    await receiver.replay(people('cand-h1', 'cand-h2'));
    await receiver.drain();
    const report = await receiver.erase({ email: 'cand-h1@example.org' }, { reason: 'asked, ticket 9' });
    await receiver.drain();
    expect(crm).toEqual([
      { erasureId: expect.any(Number), account: 'default', candidateId: 'cand-h1', erasedAt: report.erasedAt, reason: 'asked, ticket 9' },
    ]);
    expect(JSON.stringify(crm)).not.toMatch(/example\.org|Hook|Person/);
    expect(mailing).toEqual(['cand-h1']);
    expect(await owed(database)).toEqual([]);
    const metrics = await receiver.metrics().metrics();
    expect(metrics).toMatch(/prequal_hooks_handler_calls_total\{handler="crm",result="ok"\} 1/);
  });

  it('retries a failing hook within a round, then in later rounds, keeping the error class and code but never its message', async () => {
    const { database } = await engine.fresh();
    const receiver = receiverOn(database, {
      dispatch: { handlerAttempts: 2, handlerRetryDelayMs: 1 },
      eraseHooks: { roundDelayMs: 300, pollMs: 50 },
    });
    let calls = 0;
    let failUntil = 4; // two rounds of two attempts fail
    receiver.onErase(
      () => {
        calls++;
        if (calls <= failUntil) throw Object.assign(new Error('cannot delete cand-h3@example.org from the CRM'), { code: 'ECONNREFUSED' });
      },
      { name: 'crm' },
    );
    await receiver.replay(people('cand-h3'));
    await receiver.drain();
    await receiver.erase({ candidateId: 'cand-h3' }, { reason: 'asked' });
    await receiver.drain();
    expect(calls).toBe(2);
    const [first] = await owed(database);
    expect(first).toMatchObject({ rounds: 1, last_error: 'crm: Error (ECONNREFUSED)' });
    await waitFor(async () => (await owed(database))[0]?.rounds === 2, 10_000, "the hook's second round");
    expect(calls).toBe(4);
    failUntil = 0;
    await waitFor(async () => (await owed(database)).length === 0, 10_000, 'nothing owed');
    expect(calls).toBe(5);
  });

  it('is owed for erasures by another process and retention, and for those made before the hook was registered', async () => {
    const { database } = await engine.fresh();
    const writer = receiverOn(database);
    await writer.replay(people('cand-h4', 'cand-h5', 'cand-h6'));
    await writer.drain();
    await writer.erase({ candidateId: 'cand-h4' }, { reason: 'before the hook' });

    const app = receiverOn(database, { eraseHooks: { pollMs: 50 } });
    const erased: string[] = [];
    app.onErase((e) => void erased.push(e.candidateId));
    await waitFor(() => erased.length === 1, 10_000, 'the hook for the erasure made before it');
    expect(erased).toEqual(['cand-h4']);

    // Another process (a CLI on the same database) erases; the application's receiver calls its hook.
    await eraseCandidate(await writer.store(), { candidateId: 'cand-h5' }, { reason: 'from the command line' });
    await waitFor(() => erased.length === 2, 10_000, "the hook for the other process's erasure");
    await writer.eraseInactive({ olderThan: new Date('2026-06-01T00:00:00Z'), reason: 'retention' });
    await waitFor(() => erased.length === 3, 10_000, "the hook for retention's erasure");
    expect(erased).toEqual(['cand-h4', 'cand-h5', 'cand-h6']);
    await app.drain();
    expect(await owed(database)).toEqual([]);
  });

  it('gives a round back when the receiver stops in the middle of a call: another receiver calls the hook again', async () => {
    const { database } = await engine.fresh();
    const first = receiverOn(database);
    let started = 0;
    first.onErase(() => {
      started++;
      return new Promise(() => undefined); // never settles
    });
    await first.replay(people('cand-h7'));
    await first.drain();
    await first.erase({ candidateId: 'cand-h7' }, { reason: 'asked' });
    await waitFor(() => started === 1, 10_000, 'the hook to start');
    await first.close(1000);

    const second = receiverOn(database);
    const erased: string[] = [];
    second.onErase((e) => void erased.push(e.candidateId));
    await waitFor(() => erased.length === 1, 10_000, "the second receiver's call");
    expect(erased).toEqual(['cand-h7']);
    await second.drain();
    expect(await owed(database)).toEqual([]);
  });
});
