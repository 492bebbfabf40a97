// Single rows of the projected state by key, on either engine: the store's projected reads.
import type { Store } from '../store/store.js';

/** Reads single rows of the projected state by key, on either engine. */
export function createRowReaders(store: Pick<Store, 'projected'>) {
  const projected = store.projected;
  return {
    campaign: (id: string) => projected.campaign(id),
    candidate: (id: string) => projected.candidate(id),
    responses: (candidateId: string) => projected.responses(candidateId),
    credits: () => projected.credits(),
  };
}

export type RowReaders = ReturnType<typeof createRowReaders>;
