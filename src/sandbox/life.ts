// The simulated life of a campaign: queued calls ring, invited candidates sometimes come to
// interview, interviews end completed or failed. Outcomes come from each candidate's seeded
// stream, drawn in a fixed order, so a seed gives the same outcomes whatever the timing.
import type { FAILURE_REASONS } from '../events/index.js';
import type { Clock } from './clock.js';
import type { Emitter } from './events.js';
import { interviewResult } from './interview-content.js';
import type { Campaign, Candidate } from './state.js';

type FailureReason = (typeof FAILURE_REASONS)[number];
type Outcome = 'completed' | FailureReason;

/** How calls end: most are completed; the rest reach a voicemail, no one, a hang-up or a fault. */
const CALL_OUTCOMES: ReadonlyArray<[Outcome, number]> = [
  ['completed', 0.6],
  ['voicemail', 0.15],
  ['no_answer', 0.1],
  ['user_hangup', 0.1],
  ['technical_error', 0.05],
];
/** Invited candidates start the interview themselves: no voicemail, no unanswered call. */
const INVITED_OUTCOMES: ReadonlyArray<[Outcome, number]> = [
  ['completed', 0.8],
  ['user_hangup', 0.12],
  ['technical_error', 0.08],
];
/** Share of SMS or e-mail invitations taken up. */
const TAKE_UP = 0.6;

function draw(outcomes: ReadonlyArray<[Outcome, number]>, r: number): Outcome {
  let sum = 0;
  for (const [outcome, p] of outcomes) {
    sum += p;
    if (r < sum) return outcome;
  }
  return outcomes[0]![0];
}

export interface LifeOptions {
  /** How long an interview lasts (default 2000 ms); calls ring and invitations are taken up on the same scale. */
  interviewMs: number;
  emitter: Emitter;
  clock: Clock;
}

/** The life's state: its timers, and the interviews waiting for a paused campaign. */
interface Living {
  readonly options: LifeOptions;
  readonly timers: Set<NodeJS.Timeout>;
  /** Interviews due while their campaign is paused wait here for it to be active again. */
  readonly waiting: Map<string, Array<() => void>>;
  closed: boolean;
}

export function createLife(options: LifeOptions) {
  const life: Living = { options, timers: new Set(), waiting: new Map(), closed: false };
  const { interviewMs } = options;
  return {
    /** A queued call: it rings after a moment, then the interview runs to its outcome. */
    call(campaign: Campaign, candidate: Candidate): void {
      const r = candidate.random;
      const ringMs = interviewMs * (0.1 + 0.4 * r.next());
      const durationMs = interviewMs * (0.75 + 0.5 * r.next());
      const outcome = draw(CALL_OUTCOMES, r.next());
      later(life, ringMs, () => whenActive(life, campaign, () => interview(life, campaign, candidate, outcome, durationMs)));
    },
    /** An SMS or e-mail invitation: some candidates take it up after a while and interview. */
    invite(campaign: Campaign, candidate: Candidate): void {
      const r = candidate.random;
      const takesUp = r.next() < TAKE_UP;
      const afterMs = interviewMs * (0.5 + 1.5 * r.next());
      const durationMs = interviewMs * (0.75 + 0.5 * r.next());
      const outcome = draw(INVITED_OUTCOMES, r.next());
      if (takesUp) later(life, afterMs, () => whenActive(life, campaign, () => interview(life, campaign, candidate, outcome, durationMs)));
    },
    /** A campaign changed status: interviews that waited for it resume, or are dropped once it is completed. */
    statusChanged(campaign: Campaign): void {
      if (campaign.status === 'paused') return;
      const starts = life.waiting.get(campaign.campaign_id) ?? [];
      life.waiting.delete(campaign.campaign_id);
      if (campaign.status === 'active') for (const start of starts) later(life, 0, () => whenActive(life, campaign, start));
    },
    /** Interviews scheduled and not yet ended (those waiting for a paused campaign are not counted). */
    pending: (): number => life.timers.size,
    close(): void {
      life.closed = true;
      for (const timer of life.timers) clearTimeout(timer);
      life.timers.clear();
      life.waiting.clear();
    },
  };
}

function later(life: Living, ms: number, run: () => void): void {
  if (life.closed) return;
  const timer = setTimeout(() => {
    life.timers.delete(timer);
    if (!life.closed) run();
  }, ms);
  life.timers.add(timer);
}

/** Starts now when the campaign is active, later when it is paused, never once it is completed. */
function whenActive(life: Living, campaign: Campaign, start: () => void): void {
  if (campaign.status === 'active') start();
  else if (campaign.status === 'paused') life.waiting.set(campaign.campaign_id, [...(life.waiting.get(campaign.campaign_id) ?? []), start]);
}

/** Who an interview event is about. */
type Who = { campaign_id: string; candidate_id: string; first_name: string | null; last_name: string | null };

/** An interview: started now, ended after `durationMs` with its outcome. */
function interview(life: Living, campaign: Campaign, candidate: Candidate, outcome: Outcome, durationMs: number): void {
  const { emitter } = life.options;
  const who: Who = {
    campaign_id: campaign.campaign_id,
    candidate_id: candidate.candidate_id,
    first_name: candidate.first_name,
    last_name: candidate.last_name,
  };
  emitter.emit('candidate.interview.started', who);
  later(life, durationMs, () => {
    if (outcome !== 'completed') {
      candidate.status = outcome === 'voicemail' ? 'voicemail' : 'incomplete';
      candidate.failure_reason = outcome;
      emitter.emit('candidate.interview.failed', { ...who, failure_reason: outcome });
      return;
    }
    complete(life, campaign, candidate, who);
  });
}

/** A completed interview: the candidate's result drawn, kept, and sent (extended when subscribed). */
function complete(life: Living, campaign: Campaign, candidate: Candidate, who: Who): void {
  const { emitter, clock } = life.options;
  const result = interviewResult(campaign, candidate.random, clock.now());
  Object.assign(candidate, {
    status: 'completed',
    failure_reason: null,
    interview_score: result.interview_score,
    availability: result.availability,
    availability_start: result.availability_start,
    salary_expectation: result.salary_expectation,
    candidate_alignment: result.candidate_alignment,
    strengths: result.strengths,
    concerns: result.concerns,
    responses: result.responses,
  } satisfies Partial<Candidate>);
  const { responses, ...summary } = result;
  const data = { ...who, email: candidate.email, phone: candidate.phone, ...summary };
  const completed = emitter.emit('candidate.interview.completed', data);
  candidate.interview_date = completed.timestamp;
  if (emitter.subscribed('candidate.interview.completed.extended')) {
    emitter.emit('candidate.interview.completed.extended', { ...data, responses }, completed.timestamp);
  }
}

export type Life = ReturnType<typeof createLife>;
