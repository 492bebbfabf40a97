// The public surface is deliberate: the root entry holds few functions, constants and classes,
// and each one of the root's and of prequal-hooks/events is named in docs/api.md.
import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { RowOf } from '../../src/dispatch/handlers.js';
import { EVENT_KINDS, KIND_SUBJECTS, RECONCILE_KINDS, type EventKind } from '../../src/events/index.js';
import type { CampaignRow, CandidateRow, CreditsRow } from '../../src/tables/rows.js';
import * as events from '../../src/events/public.js';
import * as root from '../../src/index.js';

const page = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');

describe('the public surface', () => {
  it('the root entry holds at most 40 functions, constants and classes', () => {
    expect(Object.keys(root).length).toBeLessThanOrEqual(40);
  });

  it.each([
    ['prequal-hooks', root],
    ['prequal-hooks/events', events],
  ])('every value %s exports is named in docs/api.md', (_entry, entry) => {
    const unnamed = Object.keys(entry).filter((name) => !page.includes(`\`${name}`));
    expect(unnamed).toEqual([]);
  });
});

describe('a handler’s row', () => {
  it('is the row of the subject each kind names', () => {
    type Subjects = typeof KIND_SUBJECTS;
    type Rows = { campaign: CampaignRow; candidate: CandidateRow; credits: CreditsRow };
    // RowOf spells the subjects by the kinds' names; KIND_SUBJECTS is what the projection reads.
    expectTypeOf<{ [K in EventKind]: RowOf<K> }>().toEqualTypeOf<{ [K in EventKind]: Rows[Subjects[K]] }>();
    expect(Object.keys(KIND_SUBJECTS).sort()).toEqual([...EVENT_KINDS, ...RECONCILE_KINDS].sort());
  });
});
