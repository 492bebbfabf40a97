import type { CandidateRow } from '../tables/rows.js';
import { count } from '../words.js';
import {
  CANDIDATE_SORTS,
  CANDIDATE_STATUSES,
  createQueries,
  QueryParameterError,
  type CampaignWithStats,
  type CandidateListParameters,
} from '../query/index.js';
import type { StoreHandle } from '../store/handle.js';
import type { Store } from '../store/store.js';
import { CommandError, UsageError, type CommandIo } from './args.js';
import { accountStore } from './account-target.js';
import { databaseOf, ACCOUNT_OPTIONS, databaseOptions, flagsOnly, FORMAT_OPTIONS, optional, optionsHelp } from './options.js';
import { defineCommand } from './command.js';
import { openForReading } from './database.js';
import { outputFormat, printJson, renderTable, shortInstant, shortNumber, type Column } from './output.js';

export const INSPECT_OPTIONS = {
  ...databaseOptions('must exist'),
  ...ACCOUNT_OPTIONS,
  ...flagsOnly({
    after: optional({ placeholder: '<id>', help: 'the campaigns after this one (the "next" of the page before)' }),
    limit: optional({ placeholder: '<n>', help: 'campaigns a page, 1 to 500', defaultHelp: '50' }),
    campaign: optional({ placeholder: '<id>', help: "list this campaign's candidates" }),
    status: optional({ placeholder: '<s>', help: `only candidates in this status: ${CANDIDATE_STATUSES.join(', ')}` }),
    'min-score': optional({ placeholder: '<n>', help: 'only candidates scored at least n (0 to 10)' }),
    sort: optional({ placeholder: '<order>', help: CANDIDATE_SORTS.join(', '), defaultHelp: 'score_desc' }),
    page: optional({ placeholder: '<n>', help: 'page, from 1', defaultHelp: '1' }),
    'per-page': optional({ placeholder: '<n>', help: 'candidates per page, 1 to 100', defaultHelp: '50' }),
  }),
  ...FORMAT_OPTIONS,
};

export const INSPECT_HELP = `Usage: prequal-hooks inspect [options]
       prequal-hooks inspect --campaign <id> [--status <s>] [--min-score <n>] [--page <n>] [--per-page <n>] [options]

Shows the projected state, read-only (safe beside a running receiver): campaigns with their
statistics (newest first, a page at a time: --after pages on), credits and inbox counts; or,
with --campaign, that campaign's candidates, best score first.

${optionsHelp(INSPECT_OPTIONS)}

JSON without --campaign:
  {"campaigns": [{campaign_id, job_title, contract_type, candidate_link, questions_count, status,
                  created_at, stats: {total_candidates, interviews_completed, average_score}}],
   "next": the --after of the next page, or null on the last,
   "credits": {credits_remaining, low_threshold, last_campaign_id},
   "inbox": {pending, projected, unknown, dead, handler_failures}}
JSON with --campaign:
  {"campaign": {...as above}, "candidates": [{candidate_id, campaign_id, first_name, ...}],
   "pagination": {total, page, per_page, total_pages}}`;

/** The flags that filter the candidate list, by the query parameter they set. */
const LIST_FLAGS = { status: 'status', 'min-score': 'min_score', sort: 'sort', page: 'page', 'per-page': 'per_page' } as const;

const CAMPAIGN_COLUMNS: Array<Column<CampaignWithStats>> = [
  { header: 'CAMPAIGN', value: (c) => c.campaign_id },
  { header: 'STATUS', value: (c) => c.status },
  { header: 'JOB TITLE', value: (c) => c.job_title, max: 40 },
  { header: 'CONTRACT', value: (c) => c.contract_type },
  { header: 'CANDIDATES', value: (c) => c.stats.total_candidates, align: 'right' },
  { header: 'COMPLETED', value: (c) => c.stats.interviews_completed, align: 'right' },
  { header: 'AVG SCORE', value: (c) => shortNumber(c.stats.average_score), align: 'right' },
  { header: 'CREATED (UTC)', value: (c) => shortInstant(c.created_at) },
];

function candidateColumns(offset: number): Array<Column<CandidateRow>> {
  return [
    { header: '#', value: (_, i) => offset + i + 1, align: 'right' },
    { header: 'SCORE', value: (c) => shortNumber(c.interview_score), align: 'right' },
    { header: 'STATUS', value: (c) => c.status },
    { header: 'NAME', value: (c) => [c.first_name, c.last_name].filter(Boolean).join(' '), max: 30 },
    { header: 'EMAIL', value: (c) => c.email, max: 34 },
    { header: 'PHONE', value: (c) => c.phone },
    { header: 'INTERVIEW (UTC)', value: (c) => shortInstant(c.interview_date) },
    { header: 'FAILURE', value: (c) => c.failure_reason },
    { header: 'CANDIDATE ID', value: (c) => c.candidate_id },
  ];
}

/** The flags that page the campaigns, by the query parameter they set. */
const CAMPAIGN_PAGE_FLAGS = { after: 'after', limit: 'limit' } as const;

async function overview(store: StoreHandle & Pick<Store, 'counts'>, paging: { after?: string; limit?: string }) {
  const queries = createQueries(store);
  const limit = paging.limit === undefined ? undefined : Number(paging.limit);
  const page = await asUsage(CAMPAIGN_PAGE_FLAGS, () => queries.listCampaignPage({ after: paging.after, limit }));
  return {
    campaigns: page.campaigns,
    next: page.next,
    credits: await queries.getCredits(),
    inbox: await store.counts(),
  };
}

/** Runs a query, a parameter it refuses being the error of the flag that set it. */
async function asUsage<T>(flags: Record<string, string>, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (!(error instanceof QueryParameterError)) throw error;
    const flag = Object.entries(flags).find(([, parameter]) => parameter === error.parameter)?.[0] ?? error.parameter;
    throw new UsageError(`--${flag}: ${error.message.slice(error.parameter.length + 2)}`);
  }
}

function printOverview(io: CommandIo, state: Awaited<ReturnType<typeof overview>>): void {
  const { credits, inbox } = state;
  const lines = [
    state.campaigns.length === 0 ? 'No campaigns yet.' : renderTable(state.campaigns, CAMPAIGN_COLUMNS),
    '',
    `Credits  ${credits.credits_remaining ?? 'unknown'} remaining, low threshold ${credits.low_threshold ?? 'unknown'}, last campaign ${credits.last_campaign_id ?? 'unknown'}`,
    `Inbox    ${inbox.projected} projected, ${inbox.pending} pending, ${inbox.unknown} unknown, ${inbox.dead} dead; ${inbox.handler_failures} handler failures`,
    ...(state.next === null ? [] : ['', `More campaigns: prequal-hooks inspect --after ${state.next}`]),
  ];
  io.stdout.write(`${lines.join('\n')}\n`);
}

async function campaignPage(store: StoreHandle, campaignId: string, parameters: CandidateListParameters) {
  const queries = createQueries(store);
  const campaign = await queries.getCampaign(campaignId);
  if (campaign === undefined) throw new CommandError(`no campaign ${campaignId} in this database; "prequal-hooks inspect" lists them`);
  return { campaign, ...(await asUsage(LIST_FLAGS, () => queries.listCandidates(campaignId, parameters))) };
}

function printCampaignPage(io: CommandIo, page: Awaited<ReturnType<typeof campaignPage>>): void {
  const { campaign, candidates, pagination } = page;
  const { stats } = campaign;
  const lines = [
    `${campaign.campaign_id}  ${campaign.job_title ?? '(no title yet)'}  ${campaign.status ?? ''}`.trimEnd(),
    `${count(stats.total_candidates, 'candidate')}, ${count(stats.interviews_completed, 'interview')} completed, average score ${shortNumber(stats.average_score) ?? 'none yet'}`,
    '',
    candidates.length === 0
      ? 'No candidates on this page.'
      : renderTable(candidates, candidateColumns((pagination.page - 1) * pagination.per_page)),
    '',
    `Page ${pagination.page} of ${Math.max(1, pagination.total_pages)} (${count(pagination.total, 'candidate')}, ${pagination.per_page} per page)`,
  ];
  io.stdout.write(`${lines.join('\n')}\n`);
}

export const inspect = defineCommand({
  options: INSPECT_OPTIONS,
  help: INSPECT_HELP,
  async run(command, io) {
    const { values } = command;
    const format = outputFormat(values, io);
    const parameters: Record<string, string> = { sort: 'score_desc' };
    for (const [flag, parameter] of Object.entries(LIST_FLAGS)) {
      const value = values[flag as keyof typeof LIST_FLAGS];
      if (value === undefined) continue;
      if (values.campaign === undefined) throw new UsageError(`--${flag} filters a candidate list: give --campaign <id> too`);
      parameters[parameter] = value;
    }
    for (const flag of Object.keys(CAMPAIGN_PAGE_FLAGS))
      if (values.campaign !== undefined && values[flag as keyof typeof CAMPAIGN_PAGE_FLAGS] !== undefined)
        throw new UsageError(`--${flag} pages the campaigns: not with --campaign (--page pages its candidates)`);

    const { location, postgres } = databaseOf(command);
    const opened = await openForReading(location, postgres);
    try {
      const store = await accountStore(opened, location, values.account);
      if (values.campaign === undefined) {
        const state = await overview(store, { after: values.after, limit: values.limit });
        if (format === 'json') printJson(io, state);
        else printOverview(io, state);
      } else {
        const page = await campaignPage(store, values.campaign, parameters);
        if (format === 'json') printJson(io, page);
        else printCampaignPage(io, page);
      }
    } finally {
      await opened.close();
    }
    return 0;
  },
});
