import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/prometheus.js';
import { readEnvelope } from '../../src/events/index.js';
import { createLogger } from '../../src/logging.js';
import { deliveryOf } from '../../src/receive/delivery.js';
import { DEFAULT_ACCOUNT } from '../../src/receive/account.js';
import { createReceiver } from '../../src/receiver/create-receiver.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { ENGINES, freshStore } from '../support/engines.js';

const SECRET = 'whsec_metrics_4e1b';

describe('receiver.metrics()', () => {
  it('counts requests, events, lag, handler calls, inbox rows and storage, in a registry of its own', async () => {
    const receiver = createReceiver({
      database: ':memory:',
      secret: SECRET,
      logger: createLogger({ level: 'silent' }),
      dispatch: { handlerAttempts: 2, handlerRetryDelayMs: 1 },
    });
    receiver.on('candidate.added', () => undefined, { name: 'crm' });
    receiver.on(
      'credits.low',
      () => {
        throw new Error('down');
      },
      { name: 'pager' },
    );
    const send = (event: unknown, secret = SECRET) => {
      const request = signedRequest(event, { secret });
      return receiver.receive({ rawBody: request.body, headers: request.headers });
    };
    const added = sampleEvent('candidate.added');
    await send(added);
    await send(added); // duplicate
    await send(sampleEvent('credits.low'));
    await send({ event: 'candidate.hired', timestamp: '2026-11-20T10:00:00Z', data: {} });
    await receiver.drain();

    const text = await receiver.metrics().metrics();
    expect(text).toMatch(/prequal_hooks_events_total\{account="default",kind="candidate.added",state="projected"\} 1/);
    expect(text).toMatch(/prequal_hooks_events_total\{account="default",kind="credits.low",state="projected"\} 1/);
    expect(text).toMatch(/prequal_hooks_events_total\{account="default",kind="other",state="unknown"\} 1/);
    expect(text).toMatch(/prequal_hooks_projection_lag_seconds_count\{account="default"\} 3/);
    expect(text).toMatch(/prequal_hooks_handler_calls_total\{handler="crm",result="ok"\} 1/);
    expect(text).toMatch(/prequal_hooks_handler_calls_total\{handler="pager",result="failed"\} 2/);
    expect(text).toMatch(/prequal_hooks_inbox_rows\{account="default",state="projected"\} 2/);
    expect(text).toMatch(/prequal_hooks_inbox_rows\{account="default",state="unknown"\} 1/);
    expect(text).toMatch(/prequal_hooks_inbox_rows\{account="default",state="handler_failures"\} 1/);
    expect(text).toMatch(/prequal_hooks_storage_up 1/);
    expect(text).toMatch(/prequal_hooks_process_cpu_seconds_total/);
    // A second receiver has its own registry.
    const other = createReceiver({ database: ':memory:', secret: SECRET });
    expect(await other.metrics().metrics()).not.toMatch(/prequal_hooks_projection_lag_seconds_count\{/); // none observed there
    await other.close();
    await receiver.close();
  });

  it('counts erasures by request or retention, and the events they redacted, with no personal data in a label', async () => {
    const receiver = createReceiver({ database: ':memory:', allowUnsigned: true, logger: createLogger({ level: 'silent' }) });
    await receiver.replay([
      sampleEvent('candidate.added', {
        timestamp: '2020-01-01T10:00:00.000Z',
        data: { candidate_id: 'cand-old', email: 'old.person@example.com' },
      }),
      sampleEvent('candidate.added', {
        timestamp: '2026-11-20T10:00:00.000Z',
        data: { candidate_id: 'cand-asked', email: 'asked.person@example.com' },
      }),
      sampleEvent('candidate.interview.started', { timestamp: '2026-11-20T11:00:00.000Z', data: { candidate_id: 'cand-asked' } }),
    ]);
    await receiver.drain();
    const before = await receiver.metrics().metrics();
    expect(before).not.toMatch(/prequal_hooks_erasures_total\{/);
    await receiver.erase({ email: 'asked.person@example.com' }, { reason: 'asked by the person, ticket 4411' });
    await receiver.eraseInactive({ olderThan: 730 * 86_400_000, reason: 'retention', dryRun: true });
    let text = await receiver.metrics().metrics();
    expect(text).toMatch(/prequal_hooks_erasures_total\{account="default",reason="request"\} 1/);
    expect(text).not.toMatch(/reason="retention"/); // a dry run erases nothing
    expect(text).toMatch(/prequal_hooks_redacted_events_total\{account="default"\} 2/);
    await receiver.eraseInactive({ olderThan: 730 * 86_400_000, reason: 'retention' });
    text = await receiver.metrics().metrics();
    expect(text).toMatch(/prequal_hooks_erasures_total\{account="default",reason="retention"\} 1/);
    expect(text).toMatch(/prequal_hooks_redacted_events_total\{account="default"\} 3/);
    expect(text).not.toMatch(/ticket|example\.com|cand-/);
    await receiver.close();
  });
});

describe.each(ENGINES)('the backlog age on $name', (engine) => {
  it('is the age of the oldest pending row, 0 with none pending, and NaN (not a false 0) when the store is not there', async () => {
    const { store, close } = await freshStore(engine);
    try {
      const metrics = createMetrics(() => store);
      const backlog = async () =>
        /^prequal_hooks_backlog_age_seconds\{account="default"\} (\S+)$/m.exec(await metrics.registry.metrics())?.[1];
      expect(await backlog()).toBe('0');
      const hourAgo = new Date(Date.now() - 3600_000).toISOString();
      const raw = Buffer.from(JSON.stringify(sampleEvent('candidate.added')));
      await store.write((tx) => tx.append([deliveryOf(DEFAULT_ACCOUNT, raw, readEnvelope(raw), hourAgo, 'fp')]));
      const raw2 = Buffer.from(JSON.stringify(sampleEvent('credits.low')));
      await store.write((tx) => tx.append([deliveryOf(DEFAULT_ACCOUNT, raw2, readEnvelope(raw2), new Date().toISOString(), 'fp')]));
      const age = Number(await backlog());
      expect(age).toBeGreaterThanOrEqual(3600);
      expect(age).toBeLessThan(3660);
      expect(await createMetrics(() => undefined).registry.metrics()).toMatch(
        /^prequal_hooks_backlog_age_seconds\{account="default"\} nan$/im,
      );
    } finally {
      await close();
    }
  });
});
