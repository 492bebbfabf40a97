// The projected rows as the projection and the store hand them to each other: each with its field
// versions (src/project/versions.ts), the keys a batch touches, what it writes back, and the
// effects a bulk load keeps aside. Plain data, of no engine.
import type { CampaignRow, CandidateRow, CreditsRow, InterviewResponse } from './rows.js';

/** A projected row as stored: its columns, and its encoded field versions (src/project/versions.ts). */
export interface StoredRow<T> {
  row: T;
  field_versions: string;
  /** Not in the table yet (an empty row): `saveRows` must write it even if nothing set a column. */
  absent?: boolean;
}

/** The projected rows a batch of events touches. */
export interface RowKeys {
  campaigns: readonly string[];
  candidates: readonly string[];
  credits: boolean;
}

/** The rows of `RowKeys`, locked until the transaction ends; a key with no row yet comes as an empty, `absent` row. */
export interface StoredRows {
  campaigns: Map<string, StoredRow<CampaignRow>>;
  candidates: Map<string, StoredRow<CandidateRow>>;
  credits: StoredRow<CreditsRow> | undefined;
}

/** Rows to write back whole; `responses` replaces the interview responses of each candidate named. */
export interface RowWrites {
  campaigns: readonly StoredRow<CampaignRow>[];
  candidates: readonly StoredRow<CandidateRow>[];
  credits: StoredRow<CreditsRow> | undefined;
  responses: ReadonlyMap<string, readonly InterviewResponse[]>;
}

/**
 * One effect of one event, kept aside by a bulk load until every event is read: `set` is the
 * JSON of the columns it sets ('' for none: it only names its row).
 */
export interface StagedEffect {
  table: 'campaigns' | 'candidates' | 'credits';
  key: string;
  /** The event's order key (docs/projection.md section 2). */
  version: string;
  set: string;
}
