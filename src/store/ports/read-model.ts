// The read model: the reads of the operator console, the CLI and the library's queries, typed.
// query/ validates and shapes; the engines (store/sqlite/read-model.ts, store/postgres/read-model.ts)
// hold the SQL, each in its own dialect where the two differ.
import type { CampaignRow, CandidateRow } from '../../tables/rows.js';
import type { InboxState } from '../inbox-state.js';

/** A campaign with its counts, as the service's `GET /campaigns/{id}/status` has them. */
export interface CampaignStatsRow extends CampaignRow {
  total_candidates: number;
  interviews_completed: number;
  /** Mean score of the completed interviews; null when there are none. */
  average_score: number | null;
}

export type CandidateSort = 'date_desc' | 'date_asc' | 'score_desc' | 'score_asc';
type CandidateStatus = NonNullable<CandidateRow['status']>;

/** One page of a campaign's candidates, filtered and sorted as the service lists them. */
export interface CandidateListQuery {
  campaignId: string;
  status?: CandidateStatus;
  minScore?: number;
  sort: CandidateSort;
  limit: number;
  offset: number;
}

/** A filter of inbox rows, validated: every member given narrows the rows. */
export interface InboxFilter {
  kind?: string;
  /** Any of these states (none: every state). */
  states?: readonly InboxState[];
  /** The campaign or candidate an accepted body names in `data`. */
  campaign?: string;
  candidate?: string;
  /** Received at or after / before these instants (ISO, UTC, milliseconds: as the inbox stores them). */
  from?: string;
  to?: string;
  verdict?: string;
  upTo?: number;
}

export interface EventSummaryRow {
  inbox_id: number;
  received_at: string;
  kind: string | null;
  state: InboxState;
  verdict: string;
  attempts: number;
  processed_at: string | null;
  campaign_id: string | null;
  candidate_id: string | null;
  /** JSON array of {path, message}, for unknown and dead rows. */
  reasons: string | null;
}

export interface EventDetailRow extends Omit<EventSummaryRow, 'campaign_id' | 'candidate_id'> {
  raw: Uint8Array;
  identity: string | null;
  /** Fingerprint of the secret that matched; null when unsigned. */
  secret_id: string | null;
}

export interface HandlerFailureFilter {
  handler?: string;
  kind?: string;
  /** Only failures with an id up to this one. */
  upTo?: number;
}

export interface HandlerFailureListRow {
  failure_id: number;
  inbox_id: number;
  /** The kind of the failed event. */
  kind: string | null;
  handler: string;
  error: string;
  attempts: number;
  failed_at: string;
}

/** How many rows match, and the highest id among them (a bulk action's preview). */
export interface MatchCount {
  count: number;
  upTo: number | null;
}

export interface ReadModel {
  campaign(campaignId: string): Promise<CampaignStatsRow | undefined>;
  /**
   * A page of the campaigns: newest first, campaigns known only through candidates (no created_at)
   * last, by id. `after`: only those after this campaign in that order (none when it is unknown).
   */
  campaigns(page: { after?: string; limit: number }): Promise<CampaignStatsRow[]>;
  /** The page asked for, and how many candidates match in all. */
  listCandidates(query: CandidateListQuery): Promise<{ total: number; candidates: CandidateRow[] }>;

  /** Inbox rows, newest first; `before`: only rows older than this inbox id; `since`: only from this inbox id on. */
  listEvents(filter: InboxFilter, page: { before?: number; since?: number; limit: number }): Promise<EventSummaryRow[]>;
  countEvents(filter: InboxFilter): Promise<MatchCount>;
  /** Inbox ids that match, oldest first. */
  eventIds(filter: InboxFilter, limit: number): Promise<number[]>;
  event(inboxId: number): Promise<EventDetailRow | undefined>;
  /** The highest inbox id of any account (ids are shared), null when the inbox is empty. */
  newestEventId(): Promise<number | null>;
  /** Rows received since `since` (ISO) by UTC minute (`YYYY-MM-DDTHH:MM`); minutes without rows absent. */
  eventsPerMinute(since: string): Promise<Array<{ minute: string; count: number }>>;
  /** When the oldest pending row was received; null when none waits. */
  oldestPending(): Promise<string | null>;
  /** The kinds a filter can choose, in order: every kind the service sends or reconciliation writes, and those of the rows set aside. */
  kinds(): Promise<string[]>;
  /** Handler failures, newest first, with their event's kind. */
  handlerFailures(filter: HandlerFailureFilter, limit: number): Promise<HandlerFailureListRow[]>;
  countHandlerFailures(filter: HandlerFailureFilter): Promise<MatchCount>;
}
