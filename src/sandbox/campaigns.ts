// Create, modify, change the status of, and read campaigns.
import {
  check,
  CREATE_CAMPAIGN_RULES,
  changeStatusRequestSchema,
  createCampaignRequestSchema,
  listCampaignsQuerySchema,
  modifyCampaignRequestSchema,
  MODIFY_CAMPAIGN_RULES,
  paginate,
  type CampaignRecord,
  type CampaignStats,
  type CampaignStatusResponse,
  type ChangeStatusResponse,
  type CreateCampaignResponse,
  type ModifyCampaignResponse,
  type QuestionWeight,
} from '../api/index.js';
import type { ApiRequest, SandboxContext } from './context.js';
import { rollOver } from './credits.js';
import { errorReply, ok, violationReply, type Reply } from './errors.js';
import { generateQuestions } from './interview-content.js';
import type { Campaign } from './state.js';
import { defaultVoiceFor, resolveVoice } from './voices.js';

/** Runs `route` on the agency's campaign named in the path; another agency's campaign is as missing (404). */
export function withCampaign(request: ApiRequest, route: (campaign: Campaign) => Reply): Reply {
  const campaignId = request.params.campaign_id;
  const campaign = campaignId === undefined ? undefined : request.agency.campaigns.get(campaignId);
  return campaign === undefined ? errorReply('CAMPAIGN_NOT_FOUND', { campaign_id: campaignId ?? null }) : route(campaign);
}

function campaignStats(campaign: Campaign): CampaignStats {
  const completed = campaign.candidates.filter((c) => c.status === 'completed');
  const scores = completed.map((c) => c.interview_score).filter((s): s is number => s !== null);
  return {
    total_candidates: campaign.candidates.length,
    interviews_completed: completed.length,
    average_score: scores.length === 0 ? null : scores.reduce((a, b) => a + b, 0) / scores.length,
  };
}

function statusResponse(campaign: Campaign): CampaignStatusResponse {
  return {
    campaign_id: campaign.campaign_id,
    job_title: campaign.job_title,
    status: campaign.status,
    created_at: campaign.created_at,
    updated_at: campaign.updated_at,
    stats: campaignStats(campaign),
  };
}

function record(campaign: Campaign): CampaignRecord {
  const { agency: _agency, candidates: _candidates, ...fields } = campaign;
  return { ...fields, stats: campaignStats(campaign) };
}

// When absent, these inherit the agency's defaults: the sandbox agency's are these.
const AGENCY_DEFAULTS = { enable_engage: true, enable_recapInterview: true, enable_recapJob: false, enable_close: false } as const;

export function createCampaign(request: ApiRequest, context: SandboxContext): Reply {
  const checked = check(createCampaignRequestSchema, request.body, CREATE_CAMPAIGN_RULES);
  if (!checked.ok) return violationReply(checked.violation);
  const body = checked.value;
  const { agency } = request;
  const language = body.language ?? 'fr';
  let voice = { override_agent_id: defaultVoiceFor(language), is_voice_clone: false };
  if (body.override_agent_id !== undefined) {
    const found = resolveVoice(agency, body.override_agent_id);
    if (found === undefined)
      return errorReply('INVALID_OVERRIDE_AGENT_ID', { field: 'override_agent_id', override_agent_id: body.override_agent_id });
    voice = found;
  }
  rollOver(agency.credits, context.clock.now());
  if (agency.credits.available <= 0) return errorReply('INSUFFICIENT_CREDITS', { credits_available: agency.credits.available });

  const supplied = body.questions !== undefined;
  const questions = body.questions ?? generateQuestions(body.job_title, body.contract_type, body.job_description, language);
  const campaignId = `cmp_${context.ids.token(10)}`;
  const campaign: Campaign = {
    campaign_id: campaignId,
    agency,
    candidate_link: `https://apply.sandbox.example/c/${campaignId.slice(4)}`,
    status: 'active',
    created_at: '',
    updated_at: '',
    job_title: body.job_title,
    contract_type: body.contract_type,
    job_description: body.job_description,
    additional_info: body.additional_info ?? null,
    client_name: body.client_name ?? agency.name,
    language,
    questions,
    question_weights: body.question_weights ?? questions.map((): QuestionWeight => 1),
    question_binary_evaluations: body.question_binary_evaluations ?? null,
    questions_source: supplied ? 'default' : 'ai',
    ...voice,
    enable_salary_question: body.enable_salary_question ?? 'Non',
    enable_job_search_question: body.enable_job_search_question ?? false,
    enable_availability_question: body.enable_availability_question ?? true,
    enable_introduction_question: body.enable_introduction_question ?? true,
    enable_engage: body.enable_engage ?? AGENCY_DEFAULTS.enable_engage,
    engage_message: body.engage_message || null,
    enable_recapInterview: body.enable_recapInterview ?? AGENCY_DEFAULTS.enable_recapInterview,
    enable_recapJob: body.enable_recapJob ?? AGENCY_DEFAULTS.enable_recapJob,
    recap_job_message: body.recap_job_message || null,
    enable_close: body.enable_close ?? AGENCY_DEFAULTS.enable_close,
    close_message: body.close_message || null,
    automatic_selection_threshold: body.automatic_selection_threshold ?? null,
    language_test_mode: body.language_test_mode ?? 'none',
    custom_language_question: body.custom_language_question || null,
    candidates: [],
  };
  agency.campaigns.set(campaignId, campaign);
  const event = context.emitter.emit('campaign.created', {
    campaign_id: campaignId,
    job_title: campaign.job_title,
    contract_type: campaign.contract_type,
    candidate_link: campaign.candidate_link,
    questions_count: questions.length,
    status: 'active',
  });
  campaign.created_at = campaign.updated_at = event.timestamp;
  const response: CreateCampaignResponse = {
    campaign_id: campaignId,
    candidate_link: campaign.candidate_link,
    status: 'active',
    questions_generated: questions.length,
    questions_source: campaign.questions_source,
  };
  return ok(response, 201);
}

export function modifyCampaign(request: ApiRequest, context: SandboxContext): Reply {
  return withCampaign(request, (campaign) => modify(campaign, request, context));
}

function modify(campaign: Campaign, request: ApiRequest, context: SandboxContext): Reply {
  const schema = modifyCampaignRequestSchema({ questionCount: campaign.questions.length, languageTestMode: campaign.language_test_mode });
  const checked = check(schema, request.body, MODIFY_CAMPAIGN_RULES);
  if (!checked.ok) return violationReply(checked.violation);
  const {
    override_agent_id,
    questions,
    question_weights,
    question_binary_evaluations,
    status: _status,
    is_voice_clone: _clone,
    ...plain
  } = checked.value;

  let voice: { override_agent_id: string; is_voice_clone: boolean } | undefined;
  if (override_agent_id === null) {
    // null resets to the default voice of the campaign's language (the new one when it changes too).
    voice = { override_agent_id: defaultVoiceFor(plain.language ?? campaign.language), is_voice_clone: false };
  } else if (override_agent_id !== undefined) {
    voice = resolveVoice(request.agency, override_agent_id);
    if (voice === undefined) return errorReply('INVALID_OVERRIDE_AGENT_ID', { field: 'override_agent_id', override_agent_id });
  }

  const changes: Partial<Campaign> = {};
  for (const [field, value] of Object.entries(plain)) if (value !== undefined) (changes as Record<string, unknown>)[field] = value;
  if (plain.client_name === null) changes.client_name = request.agency.name;
  for (const field of ['engage_message', 'recap_job_message', 'close_message', 'custom_language_question'] as const) {
    if (plain[field] === '') changes[field] = null;
  }
  if (plain.language_test_mode === 'none') changes.custom_language_question = null;
  if (questions !== undefined) {
    // The whole question set is replaced, with its weights and binary evaluations.
    Object.assign(changes, {
      questions,
      question_weights,
      question_binary_evaluations: question_binary_evaluations ?? null,
      questions_source: 'default',
    });
  } else {
    if (question_weights !== undefined) changes.question_weights = question_weights;
    if (question_binary_evaluations !== undefined) changes.question_binary_evaluations = question_binary_evaluations;
  }
  Object.assign(campaign, changes, voice);
  campaign.updated_at = new Date(context.clock.now()).toISOString();
  const response: ModifyCampaignResponse = { campaign_id: campaign.campaign_id, updated_at: campaign.updated_at };
  return ok(response);
}

export function changeCampaignStatus(request: ApiRequest, context: SandboxContext): Reply {
  return withCampaign(request, (campaign) => changeStatus(campaign, request, context));
}

function changeStatus(campaign: Campaign, request: ApiRequest, context: SandboxContext): Reply {
  const checked = check(changeStatusRequestSchema, request.body, []);
  if (!checked.ok) return violationReply(checked.violation);
  const old = campaign.status;
  const next = checked.value.status;
  if (old === 'completed' && next !== 'completed') {
    return errorReply('VALIDATION_ERROR', { status: 'a completed campaign cannot change status' });
  }
  if (next !== old) {
    campaign.status = next;
    const event = context.emitter.emit('campaign.status_changed', {
      campaign_id: campaign.campaign_id,
      job_title: campaign.job_title,
      old_status: old,
      new_status: next,
    });
    campaign.updated_at = event.timestamp;
    context.life.statusChanged(campaign);
  }
  const response: ChangeStatusResponse = {
    campaign_id: campaign.campaign_id,
    old_status: old,
    new_status: next,
    updated_at: campaign.updated_at,
  };
  return ok(response);
}

export function getCampaignStatus(request: ApiRequest): Reply {
  return withCampaign(request, (campaign) => ok(statusResponse(campaign)));
}

export function getCampaign(request: ApiRequest): Reply {
  return withCampaign(request, (campaign) => ok(record(campaign)));
}

export function listCampaigns(request: ApiRequest): Reply {
  const checked = check(listCampaignsQuerySchema, request.query, []);
  if (!checked.ok) return violationReply(checked.violation);
  const { page, per_page, status } = checked.value;
  const newestFirst = [...request.agency.campaigns.values()].reverse().filter((c) => status === undefined || c.status === status);
  const { items, pagination } = paginate(newestFirst, page, per_page);
  return ok({ campaigns: items.map(statusResponse), pagination });
}
