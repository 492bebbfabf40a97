// docs/client.md's example against a sandbox, through the package's own export
// (prequal-hooks/client): if this file breaks, so does the page.
import { expect, it } from 'vitest';
import { createClient, PrequalApiError } from 'prequal-hooks/client';
import { createSandbox } from 'prequal-hooks/sandbox';

it('creates a campaign, adds a candidate and walks the list', async () => {
  const sandbox = await createSandbox({ seed: 'readme-client', interviewMs: 600_000, log: () => {} });
  try {
    const client = createClient({ apiKey: sandbox.generatedApiKey!, baseUrl: sandbox.url });
    const { campaign_id } = await client.createCampaign({
      job_title: 'Cariste CACES 3',
      contract_type: 'CDD',
      job_description: 'Conduite de chariot frontal.',
    });
    await client.addCandidates(campaign_id, {
      candidates: [{ first_name: 'Inès', last_name: 'Haddad', phone_number: '06 12 34 56 78', email: 'ines.haddad@exemple.fr' }],
    });
    const walked = [];
    for await (const candidate of client.eachCandidate(campaign_id, { sort: 'score_desc' })) walked.push(candidate.phone);
    expect(walked).toEqual(['+33612345678']);
    await expect(
      client.createCampaign({ job_title: 'x', contract_type: 'CDD', job_description: 'y', close_message: 'z'.repeat(351) }),
    ).rejects.toBeInstanceOf(PrequalApiError);
  } finally {
    await sandbox.close();
  }
});
