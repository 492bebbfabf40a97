-- The projected state of docs/projection.md section 4. Table and column names are a public contract.
-- `field_versions` (for each column, the order key of the event that last set it; encoded by
-- src/project/write.ts) is ours: it makes every column a last-writer-wins register, so a late
-- event lands exactly where in-order application would have put it, without refolding.
CREATE TABLE campaigns (
  campaign_id     TEXT PRIMARY KEY,
  job_title       TEXT,
  contract_type   TEXT,
  candidate_link  TEXT,
  questions_count INTEGER,
  status          TEXT,
  created_at      TEXT,
  field_versions  TEXT NOT NULL DEFAULT '|'
);

CREATE TABLE candidates (
  candidate_id        TEXT PRIMARY KEY,
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
  field_versions      TEXT NOT NULL DEFAULT '|'
);
CREATE INDEX candidates_by_campaign ON candidates (campaign_id);

CREATE TABLE interview_responses (
  candidate_id TEXT    NOT NULL,
  position     INTEGER NOT NULL,
  question     TEXT,
  answer       TEXT,
  score        REAL,
  explanation  TEXT,
  PRIMARY KEY (candidate_id, position)
);

CREATE TABLE credits (
  account           INTEGER PRIMARY KEY CHECK (account = 1),
  credits_remaining REAL,
  low_threshold     REAL,
  last_campaign_id  TEXT,
  field_versions    TEXT NOT NULL DEFAULT '|'
);
