// The events the destination tests project, each in a batch of its own so that each makes its own change.
import { replayInto } from '../../src/replay/index.js';
import type { Store } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/samples.js';

/** `candidate.added` for `candidateId` at 08:`minute` on 2026-11-09, in `campaign`. */
export function candidateAdded(candidateId: string, minute: number, campaign = 'cmp_1') {
  return sampleEvent('candidate.added', {
    timestamp: `2026-11-09T08:${String(minute).padStart(2, '0')}:00.000Z`,
    data: { candidate_id: candidateId, campaign_id: campaign },
  });
}

/** Each event projected in a batch of its own. */
export async function project(store: Store, events: readonly unknown[]): Promise<void> {
  for (const event of events) await replayInto({ store }, [event]);
}

/** `n` candidates added, `cand_<from>` onward. */
export const candidates = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => candidateAdded(`cand_${from + i}`, (from + i) % 60));
