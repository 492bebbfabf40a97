// The sandbox's state, in memory: agencies (one per API key), their credits, campaigns and
// candidates. Every change that a webhook describes is made in the same step as its event.
import type {
  CampaignStatus,
  CandidateStatus,
  Channel,
  ContractType,
  Language,
  LanguageTestMode,
  QuestionWeight,
  SubscriptionType,
  TransactionType,
} from '../api/index.js';
import type { FAILURE_REASONS } from '../events/index.js';
import type { Random } from './random.js';

interface CreditTransaction {
  transaction_type: TransactionType;
  amount: number;
  campaign_id: string;
  at: string;
}

export interface CreditAccount {
  available: number;
  /** Exact, fractions included; the API shows it as a whole number. */
  usedThisMonth: number;
  /** What the balance is reset to on `resetDate` (not for Pay as you go). */
  monthlyAllowance: number;
  subscription: SubscriptionType;
  /** YYYY-MM-DD, the first day of the next month. */
  resetDate: string;
  lowThreshold: number;
  /** `credits.low` was sent and the balance has not risen above the threshold since. */
  lowSent: boolean;
  transactions: CreditTransaction[];
}

export interface Agency {
  id: string;
  name: string;
  apiKey: string;
  active: boolean;
  credits: CreditAccount;
  /** Insertion order is creation order. */
  campaigns: Map<string, Campaign>;
}

export type InterviewResponse = {
  question: string;
  answer: string;
  score: number;
  explanation: string;
};

export interface Candidate {
  candidate_id: string;
  campaign_id: string;
  first_name: string;
  last_name: string;
  email: string | null;
  phone: string | null;
  channel: Channel;
  is_sourced: boolean;
  status: CandidateStatus;
  interview_score: number | null;
  interview_date: string | null;
  availability: string | null;
  availability_start: string | null;
  salary_expectation: string | null;
  candidate_alignment: string | null;
  strengths: string | null;
  concerns: string | null;
  failure_reason: (typeof FAILURE_REASONS)[number] | null;
  responses: InterviewResponse[];
  /** The timestamp of the event that added it. */
  added_at: string;
  /** Its own stream of draws: its outcome does not depend on what else happens. */
  random: Random;
}

export interface Campaign {
  campaign_id: string;
  agency: Agency;
  candidate_link: string;
  status: CampaignStatus;
  created_at: string;
  updated_at: string;
  job_title: string;
  contract_type: ContractType;
  job_description: string;
  additional_info: string | null;
  client_name: string;
  language: Language;
  questions: string[];
  question_weights: QuestionWeight[];
  question_binary_evaluations: boolean[] | null;
  questions_source: 'ai' | 'default';
  override_agent_id: string;
  is_voice_clone: boolean;
  enable_salary_question: 'Non' | 'Annuelles' | 'Mensuelles' | 'Horaires';
  enable_job_search_question: boolean;
  enable_availability_question: boolean;
  enable_introduction_question: boolean;
  enable_engage: boolean;
  engage_message: string | null;
  enable_recapInterview: boolean;
  enable_recapJob: boolean;
  recap_job_message: string | null;
  enable_close: boolean;
  close_message: string | null;
  automatic_selection_threshold: number | null;
  language_test_mode: LanguageTestMode;
  custom_language_question: string | null;
  candidates: Candidate[];
}
