// A change's row as the store keeps it: its values in the columns' order, read back as the object
// the feed carries, and the objects of rows recorded before (and of an erasure's keys) read as they are.
import { describe, expect, it } from 'vitest';
import { CHANGE_ROW_COLUMNS, changeRowOf, storedChangeRow } from '../../src/tables/changes.js';
import { campaignRow, candidateRow, creditsRow } from '../support/changes.js';

describe("a change's stored row", () => {
  it('keeps the values in the columns’ order, without their names, and reads back the same object', () => {
    const rows = {
      campaign: campaignRow({ campaign_id: 'cmp_1', job_title: 'Welder', questions_count: 4 }),
      candidate: candidateRow({ candidate_id: 'c-1', campaign_id: 'cmp_1', is_sourced: true, call_queued: false, interview_score: 7.5 }),
      credits: creditsRow({ credits_remaining: 12, last_campaign_id: 'cmp_1' }),
    };
    for (const entity of ['campaign', 'candidate', 'credits'] as const) {
      const stored = storedChangeRow(entity, rows[entity]);
      for (const column of CHANGE_ROW_COLUMNS[entity]) expect(stored).not.toContain(`"${column}"`);
      const read = changeRowOf(entity, stored);
      expect(read).toStrictEqual(rows[entity]);
      expect(Object.keys(read)).toEqual(CHANGE_ROW_COLUMNS[entity]);
    }
  });

  it('reads a row stored as an object (before this format, or an erasure’s keys) as it is', () => {
    expect(changeRowOf('candidate', '{"candidate_id":"c-1","campaign_id":"cmp_1"}')).toStrictEqual({
      candidate_id: 'c-1',
      campaign_id: 'cmp_1',
    });
    expect(changeRowOf('credits', '{"credits_remaining":3,"low_threshold":null,"last_campaign_id":null}')).toStrictEqual(
      creditsRow({ credits_remaining: 3 }),
    );
  });

  it('refuses an array of a format it does not know rather than misread its columns', () => {
    expect(() => changeRowOf('campaign', '[2,"cmp_1"]')).toThrow(/format 2/);
  });
});
