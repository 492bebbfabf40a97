import { prepareRowReaders } from '../project/read.js';
import { emptyCredits, type CreditsRow } from '../store/tables.js';
import type { SqliteDatabase } from '../store/sqlite/database.js';
import { prepareCampaignQueries } from './campaigns.js';
import { prepareCandidateQueries } from './candidates.js';

export { QueryParameterError } from './errors.js';
export type { CampaignStats, CampaignWithStats } from './campaigns.js';
export type { CandidateListParameters, CandidatePage } from './candidates.js';
export { CANDIDATE_SORTS, CANDIDATE_STATUSES } from './candidates.js';

/** Reads of the projected state, on any connection (the receiver's, or a read-only one). */
export function createQueries(db: SqliteDatabase) {
  const rows = prepareRowReaders(db);
  return {
    ...prepareCampaignQueries(db),
    ...prepareCandidateQueries(db),
    /** The account's credits; every column null until a credits event arrives. */
    getCredits(): CreditsRow {
      return rows.credits() ?? emptyCredits();
    },
  };
}

export type Queries = ReturnType<typeof createQueries>;
