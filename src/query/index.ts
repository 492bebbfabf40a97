import { createRowReaders } from '../project/read.js';
import { emptyCredits, type CreditsRow } from '../tables/rows.js';
import type { StoreHandle } from '../store/handle.js';
import { storePorts } from '../store/store.js';
import { prepareCampaignQueries } from './campaigns.js';
import { prepareCandidateQueries } from './candidates.js';

export { QueryParameterError } from './errors.js';
export {
  readChanges,
  followChanges,
  ChangesDroppedError,
  CursorAheadError,
  type Change,
  type ChangeFields,
  type CampaignChange,
  type CandidateChange,
  type CreditsChange,
  type CampaignChangeRow,
  type CandidateChangeRow,
  type RedactedCandidateRow,
  type CreditsChangeRow,
  type ChangePage,
  type ChangePageParameters,
  type FollowChangesOptions,
} from './changes.js';
export type { CampaignPage, CampaignPageParameters, CampaignStats, CampaignWithStats } from './campaigns.js';
export type { CandidateListParameters, CandidatePage } from './candidates.js';
export { CANDIDATE_SORTS, CANDIDATE_STATUSES } from './candidates.js';
export {
  prepareInboxQueries,
  INBOX_STATES,
  type InboxQueries,
  type EventListParameters,
  type EventPage,
  type EventSummary,
} from './inbox.js';

/** Reads of the projected state, on either engine (the receiver's store, or a read-only one). */
export function createQueries(handle: StoreHandle) {
  const store = storePorts(handle);
  const rows = createRowReaders(store);
  return {
    ...prepareCampaignQueries(store),
    ...prepareCandidateQueries(store),
    /** The account's credits; every column null until a credits event arrives. */
    async getCredits(): Promise<CreditsRow> {
      return (await rows.credits()) ?? emptyCredits();
    },
  };
}

/** Reads of the projected state: what `createQueries` returns, and `receiver.query`. */
export type Queries = ReturnType<typeof createQueries>;
