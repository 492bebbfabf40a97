// docs/testing.md's "Replay in tests" example, verbatim: if this file breaks, so does the page.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createReceiver } from 'prequal-hooks';
import { FIXTURES_DIR, sampleEvent } from 'prequal-hooks/testing';

describe('shortlisting', () => {
  it('notifies the recruiter of strong candidates, whatever order the events come in', async () => {
    const receiver = createReceiver({ database: ':memory:', secret: 'test-secret' });
    const shortlisted: string[] = [];
    receiver.on('candidate.interview.completed', (event, { row }) => {
      if (event.data.interview_score >= 8) shortlisted.push(`${row?.first_name} ${row?.last_name}`);
    });

    const summary = await receiver.replay([
      join(FIXTURES_DIR, 'scenarios/campaign-lifecycle.shuffled.ndjson'), // the fixtures the package ships
      sampleEvent('candidate.interview.completed', {
        data: { candidate_id: 'c-42', campaign_id: 'cmp_Rk4vN8qWz2', first_name: 'Inès', last_name: 'Haddad', interview_score: 9 },
      }),
    ]);
    await receiver.drain();

    expect(summary).toMatchObject({ received: 56, duplicates: 9, projected: 47 });
    expect(shortlisted.sort()).toEqual(['Inès Haddad', 'Noémie Brunet']);
    const { candidates } = await receiver.query.listCandidates('cmp_Rk4vN8qWz2', { sort: 'score_desc', per_page: 2 });
    expect(candidates.map((c) => c.interview_score)).toEqual([9, 8.5]);
    expect((await receiver.query.getCampaign('cmp_Rk4vN8qWz2'))?.stats.interviews_completed).toBe(5);
    await receiver.close();
  });
});
