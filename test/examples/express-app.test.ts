// The README's "Express middleware" example, verbatim apart from the port and the test around it.
import express from 'express';
import { createReceiver } from 'prequal-hooks';
import { sampleEvent, sendSigned } from 'prequal-hooks/testing';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/servers.js';

describe('README: an existing Express app', () => {
  it('mounts the middleware before express.json() and gets a shortlist', async () => {
    const tmp = tempDir();
    process.env.WEBHOOK_SECRET = 'from-the-dashboard';
    // --- README ---
    const app = express();
    const receiver = createReceiver({
      database: `${tmp.dir}/hooks.db`,
      secret: process.env.WEBHOOK_SECRET,
    });

    // The webhook route reads the raw body itself: mount it before any body parser.
    app.post('/webhooks/prequal', receiver.middleware());
    app.use(express.json()); // the rest of your API, unchanged

    receiver.on('candidate.interview.completed', async (event, { row }) => {
      if (event.data.interview_score >= 8) {
        console.log(`Shortlist ${row?.first_name} for campaign ${event.data.campaign_id}`);
      }
    });

    app.get('/campaigns/:id/shortlist', async (req, res) => {
      res.json(await receiver.query.listCandidates(req.params.id, { status: 'completed', min_score: 8, sort: 'score_desc' }));
    });
    // --- end ---
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

    const event = sampleEvent('candidate.interview.completed', { data: { interview_score: 8.5 } });
    const sent = await sendSigned(`${base}/webhooks/prequal`, event, { secret: 'from-the-dashboard' });
    expect(sent).toMatchObject({ status: 200, body: { received: true, duplicate: false } });
    await receiver.drain();
    const shortlist = (await (await fetch(`${base}/campaigns/${event.data.campaign_id}/shortlist`)).json()) as {
      candidates: Array<{ candidate_id: string }>;
      pagination: { total: number };
    };
    expect(shortlist.candidates.map((c: { candidate_id: string }) => c.candidate_id)).toEqual([event.data.candidate_id]);
    expect(shortlist.pagination.total).toBe(1);

    server.close();
    await receiver.close();
    tmp.cleanup();
  });
});
