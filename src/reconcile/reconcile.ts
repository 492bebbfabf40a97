import type { CampaignStatusResponse } from '../api/campaigns.js';
import type { CandidateRecord } from '../api/candidates.js';
import type { CreditsResponse } from '../api/credits.js';
import type { ListCandidatesQuery } from '../api/candidates.js';
import type { Pagination } from '../api/pagination.js';
import { PrequalApiError } from '../client/errors.js';
import type { EventKind, ReconcileKind } from '../events/index.js';
import { createRowReaders } from '../project/read.js';
import { replayInto, type ReplayPorts } from '../replay/replay.js';
import type { StoreHandle } from '../store/handle.js';
import { storePorts } from '../store/store.js';
import type { Store } from '../store/store.js';
import type { CandidateRow } from '../tables/rows.js';
import { compareCampaign, compareCandidate, compareCredits, repairData, type Fields } from './compare.js';

/** Where an interrupted run is kept, so that the next one goes on from the campaign it stopped at. */
const PROGRESS_SETTING = 'reconcile.progress';

/** The reads `reconcileInto` makes of the service: a client of `prequal-hooks/client` (`createClient`) has them. */
export interface ReconcileClient {
  /** `GET /account/credits`. */
  getCredits(): Promise<CreditsResponse>;
  /** `GET /campaigns/{campaign_id}/status`. */
  getCampaignStatus(campaignId: string): Promise<CampaignStatusResponse>;
  /** `GET /campaigns/{campaign_id}/candidates`: one page. */
  listCandidates(campaignId: string, query: ListCandidatesQuery): Promise<{ candidates: CandidateRecord[]; pagination: Pagination }>;
}

/** What `reconcileInto` reads, and how. */
export interface ReconcileOptions {
  /** A client of the service (`prequal-hooks/client`): its throttle keeps the run within the rate limits. */
  client: ReconcileClient;
  /** Campaigns to read besides those the projection knows (a campaign none of whose webhooks arrived). */
  campaigns?: readonly string[];
  /** Read and compare, write nothing. */
  dryRun?: boolean;
  /** Stops after the campaign being read (the run resumes there next time). */
  signal?: AbortSignal;
  /** Called after each campaign. */
  onProgress?: (progress: { campaign: string; done: number; total: number }) => void;
}

/** One row that differs from the service's, and the event that repairs it. */
export interface Repair {
  /** The projected table the row is in. */
  table: 'campaigns' | 'candidates' | 'credits';
  /** The row's key (`account` for credits). */
  key: string;
  /** The row was not projected at all. */
  missing: boolean;
  /** Field by field, the projected value and the service's. */
  fields: Fields;
  /** The campaign whose list the candidate was read from. */
  campaign_id?: string;
  /** The synthetic event kind that repairs it (written unless the run is dry). */
  event: ReconcileKind;
  /** When the service was read: the repair's timestamp. */
  readAt: string;
}

/** What a run found of one campaign. */
export interface CampaignReport {
  /** The campaign. */
  campaign_id: string;
  /** Whether the service knows the campaign (a 404 is reported here, never repaired). */
  found: boolean;
  /** Candidates in the service's list. */
  candidatesRead: number;
  /** Projected candidates of the campaign that the service's list does not have (left as they are). */
  onlyInProjection: string[];
  /**
   * Candidates erased here whom the service still lists: never recreated (docs/projection.md
   * section 8); ask the service to delete them too.
   */
  erasedButListed: string[];
}

/** What a reconciliation run found and wrote. */
export interface ReconcileReport {
  /** Whether the run wrote nothing. */
  dryRun: boolean;
  /** A previous run was interrupted and this one went on from where it stopped. */
  resumed: boolean;
  /** Campaigns read now (those a resumed run had done before are not read again). */
  campaigns: CampaignReport[];
  /** Every row that differs, with the event that repairs it. */
  repairs: Repair[];
  /** Events written (0 in a dry run). */
  written: number;
  /** The run stopped early (signal): the next one resumes. */
  interrupted: boolean;
}

interface Progress {
  requested: string[];
  planned: string[];
  done: string[];
  started_at: string;
  finished: boolean;
}

/** Where `reconcileInto` writes: a store, and which kinds the caller's handlers want. */
export interface ReconcileTarget {
  /** The store to compare with and write into. */
  store: StoreHandle;
  /** Whether the caller's handlers want events of this kind (they then run on the repairs). Default: none. */
  wantsHandlers?: (kind: EventKind) => boolean;
  /** The clock of the reading, in Unix ms. Default `Date.now`. */
  now?: () => number;
}

/**
 * Reads the service's own state of every campaign the projection knows (and those named), its
 * candidate lists and the credits, compares them with the projected rows, and writes what differs
 * into the inbox as `reconcile.*` events stamped with the time of the reading: the projection's
 * last-writer-wins rule then orders them against webhooks. A second run finds nothing to repair.
 */
export async function reconcileInto(target: ReconcileTarget, options: ReconcileOptions): Promise<ReconcileReport> {
  const now = target.now ?? Date.now;
  const dryRun = options.dryRun ?? false;
  const store: ReconcilePorts = storePorts(target.store);
  const { plan, resumed } = await planOf(store, dryRun, [...new Set(options.campaigns ?? [])].sort(), now);
  const run: Run = {
    target,
    store,
    client: options.client,
    dryRun,
    now,
    stamp: () => new Date(now()).toISOString(),
    rows: createRowReaders(store),
    plan,
    report: { dryRun, resumed, campaigns: [], repairs: [], written: 0, interrupted: false },
  };
  for (const campaignId of plan.planned.filter((id) => !plan.done.includes(id))) {
    if (options.signal?.aborted) {
      run.report.interrupted = true;
      break;
    }
    const { campaign, repairs } = await readCampaign(run, campaignId);
    run.report.campaigns.push(campaign);
    await writeRepairs(run, repairs);
    plan.done.push(campaignId);
    await savePlan(run);
    options.onProgress?.({ campaign: campaignId, done: plan.done.length, total: plan.planned.length });
  }
  if (!run.report.interrupted) {
    await reconcileCredits(run);
    plan.finished = true;
    await savePlan(run);
  }
  return run.report;
}

/** What a run reads the projection with, and writes its repairs (a replay) and its progress through. */
type ReconcilePorts = Pick<Store, 'setting' | 'projected' | 'people'> & ReplayPorts;

/** One run: what it reads with, where it writes, its plan and its report so far. */
interface Run {
  target: ReconcileTarget;
  store: ReconcilePorts;
  client: ReconcileOptions['client'];
  dryRun: boolean;
  now: () => number;
  stamp: () => string;
  rows: ReturnType<typeof createRowReaders>;
  plan: Progress;
  report: ReconcileReport;
}

/** The plan: resumed from an unfinished run asked the same way, or made now. */
async function planOf(
  store: Pick<Store, 'setting' | 'projected'>,
  dryRun: boolean,
  requested: string[],
  now: () => number,
): Promise<{ plan: Progress; resumed: boolean }> {
  const stored = dryRun ? undefined : await store.setting(PROGRESS_SETTING);
  if (stored !== undefined) {
    try {
      const previous = JSON.parse(stored.value) as Progress;
      if (!previous.finished && JSON.stringify(previous.requested) === JSON.stringify(requested)) return { plan: previous, resumed: true };
    } catch {
      // an unreadable progress is a fresh start
    }
  }
  const known = await store.projected.campaignIds();
  return {
    plan: {
      requested,
      planned: [...new Set([...known, ...requested])].sort(),
      done: [],
      started_at: new Date(now()).toISOString(),
      finished: false,
    },
    resumed: false,
  };
}

async function savePlan(run: Run): Promise<void> {
  if (!run.dryRun) await run.store.write((tx) => tx.putSetting(PROGRESS_SETTING, JSON.stringify(run.plan)));
}

/** Reports the repairs and, unless a dry run, writes them as reconcile.* events, through the same path as replay and HTTP. */
async function writeRepairs(run: Run, repairs: Repair[]): Promise<void> {
  run.report.repairs.push(...repairs);
  if (run.dryRun || repairs.length === 0) return;
  const events = repairs.map((r) => ({ event: r.event, timestamp: r.readAt, data: repairData(keysOf(r), r.fields) }));
  // Identity, inbox, projection, handlers due.
  const { target } = run;
  const summary = await replayInto(
    { store: run.store, ...(target.wantsHandlers && { wantsHandlers: target.wantsHandlers }), now: run.now },
    events,
  );
  run.report.written += summary.received - summary.duplicates;
}

function keysOf(repair: Repair): Record<string, string> {
  if (repair.table === 'candidates') return { candidate_id: repair.key, campaign_id: repair.campaign_id! };
  if (repair.table === 'campaigns') return { campaign_id: repair.key };
  return {};
}

/** The credits at the service against the projected ones. */
async function reconcileCredits(run: Run): Promise<void> {
  const readAt = run.stamp();
  const credits = await run.client.getCredits();
  const fields = compareCredits(await run.rows.credits(), credits);
  if (Object.keys(fields).length > 0)
    await writeRepairs(run, [{ table: 'credits', key: 'account', missing: false, fields, event: 'reconcile.credits', readAt }]);
}

async function readCampaign(run: Run, campaignId: string): Promise<{ campaign: CampaignReport; repairs: Repair[] }> {
  const campaign: CampaignReport = { campaign_id: campaignId, found: true, candidatesRead: 0, onlyInProjection: [], erasedButListed: [] };
  const repairs: Repair[] = [];
  let status: CampaignStatusResponse;
  const statusAt = run.stamp();
  try {
    status = await run.client.getCampaignStatus(campaignId);
  } catch (error) {
    if (error instanceof PrequalApiError && error.status === 404) return { campaign: { ...campaign, found: false }, repairs };
    throw error;
  }
  const projectedCampaign = await run.rows.campaign(campaignId);
  const campaignFields = compareCampaign(projectedCampaign, status);
  if (Object.keys(campaignFields).length > 0) {
    repairs.push({
      table: 'campaigns',
      key: campaignId,
      missing: projectedCampaign === undefined,
      fields: campaignFields,
      event: 'reconcile.campaign',
      readAt: statusAt,
    });
  }

  const listed = await readList(run, campaignId);
  campaign.candidatesRead = listed.size;
  const projected = await projectedCandidates(run.store, campaignId, [...listed.keys()]);
  // Erased here (docs/projection.md section 8): a repair must never bring them back.
  const erased = await run.store.people.erasedAmong([...listed.keys()].filter((id) => !projected.has(id)));
  for (const [candidateId, { record, readAt }] of listed) {
    if (erased.has(candidateId)) {
      campaign.erasedButListed.push(candidateId);
      continue;
    }
    const row = projected.get(candidateId);
    const fields = compareCandidate(row, record, campaignId);
    if (Object.keys(fields).length > 0) {
      repairs.push({
        table: 'candidates',
        key: candidateId,
        campaign_id: campaignId,
        missing: row === undefined,
        fields,
        event: 'reconcile.candidate',
        readAt,
      });
    }
  }
  for (const [candidateId, row] of projected) {
    if (!listed.has(candidateId) && row.campaign_id === campaignId) campaign.onlyInProjection.push(candidateId);
  }
  return { campaign, repairs };
}

/**
 * The campaign's whole list, oldest first, each candidate with when its page was read. A list
 * that changes while it is walked can shift a candidate across a page boundary: when fewer
 * distinct candidates were seen than the service counts, it is walked once more.
 */
async function readList(run: Run, campaignId: string): Promise<Map<string, { record: CandidateRecord; readAt: string }>> {
  const listed = new Map<string, { record: CandidateRecord; readAt: string }>();
  for (let walk = 0; walk < 2; walk++) {
    let total: number;
    for (let page = 1; ; page++) {
      const readAt = run.stamp();
      const answer = await run.client.listCandidates(campaignId, { page, per_page: 100, sort: 'date_asc' });
      for (const record of answer.candidates) listed.set(record.candidate_id, { record, readAt });
      total = answer.pagination.total;
      if (page >= answer.pagination.total_pages || answer.candidates.length === 0) break;
    }
    if (listed.size >= total) break;
  }
  return listed;
}

/** The projected candidates of the campaign, and those of the list wherever they are projected. */
async function projectedCandidates(store: Pick<Store, 'projected'>, campaignId: string, ids: string[]): Promise<Map<string, CandidateRow>> {
  const found = new Map<string, CandidateRow>();
  for (const candidate of await store.projected.candidatesOf(campaignId)) found.set(candidate.candidate_id, candidate);
  const elsewhere = ids.filter((id) => !found.has(id));
  for (const candidate of await store.projected.candidates(elsewhere)) found.set(candidate.candidate_id, candidate);
  return found;
}
