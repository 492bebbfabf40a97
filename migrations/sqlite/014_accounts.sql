-- Several accounts in one database (docs/projection.md section 9): every table that holds an
-- account's data carries it, and every key and every index looked up by key leads with it, so that
-- two accounts' campaign or candidate ids never meet, identity (section 1) is per account, and each
-- account's reads, claims and erasures stay within its own rows. Every existing row is the default
-- account's, unchanged: its states, field versions and inbox ids are kept, nothing is re-projected.
--
-- The inbox, handler_failures and erasures gain the column in place (a constant default: no row
-- is rewritten). The intake's indexes keep growing at their right edge (migration 012): within
-- an account, event_at and inbox_id still grow with time, so each account appends at its own edge.
-- erasure_hooks names its erasure, whose row says the account.
ALTER TABLE inbox ADD COLUMN account TEXT NOT NULL DEFAULT 'default';
ALTER TABLE handler_failures ADD COLUMN account TEXT NOT NULL DEFAULT 'default';
ALTER TABLE erasures ADD COLUMN account TEXT NOT NULL DEFAULT 'default';

DROP INDEX inbox_identity_undated;
DROP INDEX inbox_identity;
DROP INDEX inbox_raw_sha256;
DROP INDEX inbox_pending;
DROP INDEX inbox_set_aside;
DROP INDEX inbox_handlers_pending;
DROP INDEX inbox_by_key;
DROP INDEX inbox_reconciled;
CREATE UNIQUE INDEX inbox_identity_undated ON inbox (account, identity) WHERE identity IS NOT NULL AND event_at IS NULL;
CREATE UNIQUE INDEX inbox_identity ON inbox (account, event_at, identity) WHERE identity IS NOT NULL AND event_at IS NOT NULL;
CREATE UNIQUE INDEX inbox_raw_sha256 ON inbox (account, raw_sha256) WHERE raw_sha256 IS NOT NULL;
-- Led by the account: which accounts have work is a few probes of these (a loose index scan).
CREATE INDEX inbox_pending ON inbox (account, inbox_id) WHERE state = 'pending';
CREATE INDEX inbox_handlers_pending ON inbox (account, inbox_id) WHERE handlers_pending = 1;
CREATE INDEX inbox_set_aside ON inbox (account, state, inbox_id) WHERE state IN ('unknown', 'dead');
CREATE INDEX inbox_by_key ON inbox (account, handler_key, inbox_id) WHERE handler_key IS NOT NULL;
CREATE INDEX inbox_reconciled ON inbox (account, inbox_id) WHERE kind LIKE 'reconcile.%';

CREATE INDEX handler_failures_by_account ON handler_failures (account, failure_id);
DROP INDEX erasures_by_candidate;
CREATE INDEX erasures_by_candidate ON erasures (account, candidate_id, erased_at);

-- The projected tables are keyed by (account, key): their primary keys change, so they are made
-- again (https://sqlite.org/lang_altertable.html#otheralter); no table references them.
CREATE TABLE campaigns_new (
  account         TEXT NOT NULL DEFAULT 'default',
  campaign_id     TEXT NOT NULL,
  job_title       TEXT,
  contract_type   TEXT,
  candidate_link  TEXT,
  questions_count INTEGER,
  status          TEXT,
  created_at      TEXT,
  field_versions  TEXT NOT NULL DEFAULT '|',
  PRIMARY KEY (account, campaign_id)
);
INSERT INTO campaigns_new (campaign_id, job_title, contract_type, candidate_link, questions_count, status, created_at, field_versions)
  SELECT campaign_id, job_title, contract_type, candidate_link, questions_count, status, created_at, field_versions FROM campaigns;
DROP TABLE campaigns;
ALTER TABLE campaigns_new RENAME TO campaigns;

CREATE TABLE candidates_new (
  account             TEXT NOT NULL DEFAULT 'default',
  candidate_id        TEXT NOT NULL,
  campaign_id         TEXT,
  first_name          TEXT,
  last_name           TEXT,
  email               TEXT,
  phone               TEXT,
  is_sourced          INTEGER NOT NULL DEFAULT 0,
  call_queued         INTEGER,
  sms_sent            INTEGER,
  status              TEXT CHECK (status IN ('pending', 'completed', 'voicemail', 'incomplete')),
  interview_score     REAL,
  interview_date      TEXT,
  interview_started_at TEXT,
  availability        TEXT,
  availability_start  TEXT,
  salary_expectation  TEXT,
  candidate_alignment TEXT,
  strengths           TEXT,
  concerns            TEXT,
  failure_reason      TEXT,
  added_at            TEXT,   -- first candidate.added / candidate.sourced instant: the date fallback of the list
  field_versions      TEXT NOT NULL DEFAULT '|',
  PRIMARY KEY (account, candidate_id)
);
INSERT INTO candidates_new (candidate_id, campaign_id, first_name, last_name, email, phone, is_sourced, call_queued, sms_sent, status,
                            interview_score, interview_date, interview_started_at, availability, availability_start, salary_expectation,
                            candidate_alignment, strengths, concerns, failure_reason, added_at, field_versions)
  SELECT candidate_id, campaign_id, first_name, last_name, email, phone, is_sourced, call_queued, sms_sent, status,
         interview_score, interview_date, interview_started_at, availability, availability_start, salary_expectation,
         candidate_alignment, strengths, concerns, failure_reason, added_at, field_versions
  FROM candidates;
DROP TABLE candidates;
ALTER TABLE candidates_new RENAME TO candidates;
CREATE INDEX candidates_by_campaign ON candidates (account, campaign_id);

CREATE TABLE interview_responses_new (
  account      TEXT    NOT NULL DEFAULT 'default',
  candidate_id TEXT    NOT NULL,
  position     INTEGER NOT NULL,
  question     TEXT,
  answer       TEXT,
  score        REAL,
  explanation  TEXT,
  PRIMARY KEY (account, candidate_id, position)
);
INSERT INTO interview_responses_new (candidate_id, position, question, answer, score, explanation)
  SELECT candidate_id, position, question, answer, score, explanation FROM interview_responses;
DROP TABLE interview_responses;
ALTER TABLE interview_responses_new RENAME TO interview_responses;

-- One row per account: the old single row (keyed 1) is the default account's.
CREATE TABLE credits_new (
  account           TEXT PRIMARY KEY,
  credits_remaining REAL,
  low_threshold     REAL,
  last_campaign_id  TEXT,
  field_versions    TEXT NOT NULL DEFAULT '|'
);
INSERT INTO credits_new (account, credits_remaining, low_threshold, last_campaign_id, field_versions)
  SELECT 'default', credits_remaining, low_threshold, last_campaign_id, field_versions FROM credits;
DROP TABLE credits;
ALTER TABLE credits_new RENAME TO credits;
