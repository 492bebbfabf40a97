// Add, source, list and read the candidates of a campaign.
import {
  addCandidatesRequestSchema,
  CANDIDATE_REQUEST_RULES,
  check,
  listCandidatesQuerySchema,
  paginate,
  readSubmittedCandidate,
  sourceCandidatesRequestSchema,
  type CallModeResponse,
  type CandidateDetails,
  type CandidateError,
  type CandidateRecord,
  type CandidateSort,
  type ContactMode,
  type InvitationResponse,
  type ReadCandidate,
  type SubmittedCandidate,
} from '../api/index.js';
import { withCampaign } from './campaigns.js';
import type { ApiRequest, SandboxContext } from './context.js';
import { charge, costOf, rollOver } from './credits.js';
import { errorReply, ok, violationReply, type Reply } from './errors.js';
import type { Campaign, Candidate } from './state.js';

export function addCandidates(request: ApiRequest, context: SandboxContext): Reply {
  return withCampaign(request, (campaign) => {
    const checked = check(addCandidatesRequestSchema, request.body, CANDIDATE_REQUEST_RULES);
    if (!checked.ok) return violationReply(checked.violation);
    return add(campaign, checked.value.candidates, checked.value.contact_mode, request, context);
  });
}

/** `POST /campaigns/{id}/source`: the same as adding, `sms` by default. */
export function sourceCandidates(request: ApiRequest, context: SandboxContext): Reply {
  return withCampaign(request, (campaign) => {
    const checked = check(sourceCandidatesRequestSchema, request.body, CANDIDATE_REQUEST_RULES);
    if (!checked.ok) return violationReply(checked.violation);
    return add(campaign, checked.value.candidates, checked.value.contact_mode, request, context);
  });
}

/** Phones and e-mails (lower case) already in the campaign: a candidate with either is skipped. */
function contactsOf(campaign: Campaign): Set<string> {
  const contacts = new Set<string>();
  for (const c of campaign.candidates) {
    if (c.phone !== null) contacts.add(c.phone);
    if (c.email !== null) contacts.add(c.email.toLowerCase());
  }
  return contacts;
}

function add(campaign: Campaign, submitted: SubmittedCandidate[], mode: ContactMode, request: ApiRequest, context: SandboxContext): Reply {
  if (campaign.status === 'completed') {
    return errorReply('VALIDATION_ERROR', { campaign_id: 'the campaign is completed: no candidate can be added' });
  }
  const errors: CandidateError[] = [];
  const accepted: ReadCandidate[] = [];
  const known = contactsOf(campaign);
  let skipped = 0;
  submitted.forEach((value, index) => {
    const reading = readSubmittedCandidate(value, mode);
    if (!reading.ok) {
      errors.push({ index, error: reading.error, code: reading.code });
      return;
    }
    const contacts = [reading.candidate.phone, reading.candidate.email?.toLowerCase()].filter((c): c is string => c != null);
    if (contacts.some((c) => known.has(c))) {
      skipped++;
      return;
    }
    for (const c of contacts) known.add(c);
    accepted.push(reading.candidate);
  });

  const credits = request.agency.credits;
  rollOver(credits, context.clock.now());
  const required = costOf(accepted.map((c) => c.channel));
  if (required > credits.available) {
    // All or nothing: no candidate of a request the balance cannot cover is added.
    return errorReply('INSUFFICIENT_CREDITS', { required, available: credits.available });
  }
  for (const read of accepted) enter(campaign, read, context);

  const count = (channel: string) => accepted.filter((c) => c.channel === channel).length;
  if (mode === 'call') {
    const response: CallModeResponse = {
      campaign_id: campaign.campaign_id,
      candidates_added: accepted.length,
      candidates_skipped: skipped,
      calls_queued: count('call'),
      errors,
    };
    return ok(response, 201);
  }
  const response: InvitationResponse = {
    campaign_id: campaign.campaign_id,
    candidates_sourced: accepted.length,
    candidates_skipped: skipped,
    sms_sent: count('sms'),
    emails_sent: count('email'),
    errors,
  };
  return ok(response, 201);
}

/** One candidate joins the campaign: its event, its cost, and its life (a call or an invitation). */
function enter(campaign: Campaign, read: ReadCandidate, context: SandboxContext): void {
  const candidateId = context.ids.uuid();
  const candidate: Candidate = {
    candidate_id: candidateId,
    campaign_id: campaign.campaign_id,
    first_name: read.first_name,
    last_name: read.last_name,
    email: read.email,
    phone: read.phone,
    channel: read.channel,
    is_sourced: read.channel === 'sms',
    status: 'pending',
    interview_score: null,
    interview_date: null,
    availability: null,
    availability_start: null,
    salary_expectation: null,
    candidate_alignment: null,
    strengths: null,
    concerns: null,
    failure_reason: null,
    responses: [],
    added_at: '',
    random: context.outcomes.derive(candidateId),
  };
  campaign.candidates.push(candidate);
  const who = { campaign_id: campaign.campaign_id, candidate_id: candidateId, first_name: read.first_name, last_name: read.last_name };
  const event =
    read.channel === 'sms'
      ? context.emitter.emit('candidate.sourced', { ...who, phone: read.phone, sms_sent: true })
      : context.emitter.emit('candidate.added', { ...who, email: read.email, phone: read.phone, call_queued: read.channel === 'call' });
  candidate.added_at = event.timestamp;
  charge(campaign.agency.credits, read.channel, campaign.campaign_id, context.emitter, event.timestamp);
  if (read.channel === 'call') context.life.call(campaign, candidate);
  else context.life.invite(campaign, candidate);
}

function candidateRecord(c: Candidate): CandidateRecord {
  return {
    candidate_id: c.candidate_id,
    first_name: c.first_name,
    last_name: c.last_name,
    email: c.email,
    phone: c.phone,
    status: c.status,
    interview_score: c.interview_score,
    interview_date: c.interview_date,
    availability: c.availability,
    salary_expectation: c.salary_expectation,
    candidate_alignment: c.candidate_alignment,
    strengths: c.strengths,
    concerns: c.concerns,
    is_sourced: c.is_sourced,
  };
}

// The receiver's order (docs/queries.md): the date is the interview's, else when the candidate
// was added; ties by candidate id; candidates without a score come last in score order.
const dateOf = (c: Candidate) => c.interview_date ?? c.added_at;
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byScore = (a: Candidate, b: Candidate, direction: 1 | -1) =>
  a.interview_score === null
    ? b.interview_score === null
      ? 0
      : 1
    : b.interview_score === null
      ? -1
      : direction * (a.interview_score - b.interview_score);
const ORDER: Record<CandidateSort, (a: Candidate, b: Candidate) => number> = {
  date_desc: (a, b) => byText(dateOf(b), dateOf(a)) || byText(a.candidate_id, b.candidate_id),
  date_asc: (a, b) => byText(dateOf(a), dateOf(b)) || byText(a.candidate_id, b.candidate_id),
  score_desc: (a, b) => byScore(a, b, -1) || ORDER.date_desc(a, b),
  score_asc: (a, b) => byScore(a, b, 1) || ORDER.date_desc(a, b),
};

export function listCandidates(request: ApiRequest): Reply {
  return withCampaign(request, (campaign) => {
    const checked = check(listCandidatesQuerySchema, request.query, []);
    if (!checked.ok) return violationReply(checked.violation);
    const { page, per_page, sort, status, min_score } = checked.value;
    const found = campaign.candidates
      .filter((c) => status === undefined || c.status === status)
      .filter((c) => min_score === undefined || (c.interview_score !== null && c.interview_score >= min_score))
      .sort(ORDER[sort]);
    const { items, pagination } = paginate(found, page, per_page);
    return ok({ candidates: items.map(candidateRecord), pagination });
  });
}

export function getCandidate(request: ApiRequest): Reply {
  return withCampaign(request, (campaign) => {
    const c = campaign.candidates.find((k) => k.candidate_id === request.params.candidate_id);
    if (c === undefined) return errorReply('RESOURCE_NOT_FOUND', { candidate_id: request.params.candidate_id ?? null });
    const details: CandidateDetails = {
      ...candidateRecord(c),
      campaign_id: c.campaign_id,
      channel: c.channel,
      added_at: c.added_at,
      availability_start: c.availability_start,
      failure_reason: c.failure_reason,
      responses: c.responses,
    };
    return ok(details);
  });
}
