// docs/handlers.md's "One handler for several kinds" example, verbatim: if this file breaks, so does the page.
import { describe, expect, it } from 'vitest';
import { createReceiver, type Handler } from 'prequal-hooks';
import { sampleEvent } from 'prequal-hooks/testing';

type InterviewEnd = 'candidate.interview.completed' | 'candidate.interview.failed';

describe('one handler for several kinds', () => {
  it('is typed for each kind it is registered for', async () => {
    const receiver = createReceiver({ database: ':memory:', secret: 'test-secret' });
    const outcomes: string[] = [];
    // Handler<K> for a union of kinds: the event is one of theirs, narrowed by `event.event`;
    // `row` is the projected row those kinds are about (here the candidate).
    const onInterviewEnd: Handler<InterviewEnd> = (event, { row }) => {
      const outcome = event.event === 'candidate.interview.completed' ? `score ${event.data.interview_score}` : event.data.failure_reason;
      outcomes.push(`${row?.first_name}: ${outcome}`);
    };
    receiver.on('candidate.interview.completed', onInterviewEnd);
    receiver.on('candidate.interview.failed', onInterviewEnd);

    await receiver.replay([
      sampleEvent('candidate.interview.completed', { data: { candidate_id: 'c-1', first_name: 'Inès', interview_score: 9 } }),
      sampleEvent('candidate.interview.failed', { data: { candidate_id: 'c-2', first_name: 'Hugo', failure_reason: 'voicemail' } }),
    ]);
    await receiver.drain();

    expect(outcomes.sort()).toEqual(['Hugo: voicemail', 'Inès: score 9']);
    await receiver.close();
  });
});
