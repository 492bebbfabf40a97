/** The service's limits, as constants: docs/sandbox.md ("The API") and docs/client.md ("Throttle") say them. */
export const LIMITS = {
  /** Requests per minute and per hour, each API key. */
  requestsPerMinute: 60,
  requestsPerHour: 1000,
  /** Largest request body. */
  maxBodyBytes: 10 * 1024 * 1024,
  /** Candidates per add or source request. */
  minCandidatesPerRequest: 1,
  maxCandidatesPerRequest: 100,
  /** Custom questions per campaign, and how many are generated without them. */
  maxQuestions: 10,
  generatedQuestions: 6,
  /** Engage, job recap and close messages. */
  maxMessageLength: 350,
  /** The candidate list's `per_page`. */
  minPerPage: 1,
  maxPerPage: 100,
  defaultPerPage: 50,
  /** `credits.low` is sent when the balance falls below this, unless configured otherwise. */
  lowCreditThreshold: 10,
  /** A webhook receiver must answer 2xx within this; failures are retried this many times. */
  webhookTimeoutMs: 5000,
  webhookRetries: 3,
} as const;
