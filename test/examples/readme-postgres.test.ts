// docs/testing.md's "PostgreSQL in tests" example, verbatim: if this file breaks, so does the page.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver } from 'prequal-hooks';
import { createDatabase, FIXTURES_DIR, startTestPostgres, type PostgresServer } from 'prequal-hooks/testing';

describe('on PostgreSQL', () => {
  let server: PostgresServer;
  // initdb and the first start take a few seconds: more than vitest's default hook timeout allows.
  beforeAll(async () => {
    server = await startTestPostgres();
  }, 60_000);
  afterAll(() => server?.stop());

  it('projects the lifecycle as on SQLite', async () => {
    const database = await createDatabase(server.url, 'lifecycle'); // a new, empty database: its postgres:// URL
    const receiver = createReceiver({ database, secret: 'test-secret' });
    await receiver.replay([join(FIXTURES_DIR, 'scenarios/campaign-lifecycle.shuffled.ndjson')]);
    await receiver.drain();
    const campaign = await receiver.query.getCampaign('cmp_Rk4vN8qWz2');
    expect(campaign?.stats).toEqual({ total_candidates: 8, interviews_completed: 4, average_score: 7.375 });
    await receiver.close();
  });
});
