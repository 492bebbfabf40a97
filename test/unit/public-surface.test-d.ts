// A handler's row (RowOf) spells the kinds' subjects by their names; KIND_SUBJECTS is what the
// projection reads: the two say the same for every kind.
import { expectTypeOf, test } from 'vitest';
import type { RowOf } from '../../src/dispatch/handlers.js';
import type { EventKind, KIND_SUBJECTS } from '../../src/events/index.js';
import type { CampaignRow, CandidateRow, CreditsRow } from '../../src/tables/rows.js';

test('RowOf gives the row of the subject KIND_SUBJECTS names', () => {
  type Rows = { campaign: CampaignRow; candidate: CandidateRow; credits: CreditsRow };
  expectTypeOf<{ [K in EventKind]: RowOf<K> }>().toEqualTypeOf<{ [K in EventKind]: Rows[(typeof KIND_SUBJECTS)[K]] }>();
});
