-- The projected state of docs/projection.md sections 4 and 7. Table and column names are a public
-- contract; types are PostgreSQL's own. `field_versions` (for each column, the order key of the
-- event that last set it) is ours: every column is a last-writer-wins register.
CREATE TABLE campaigns (
  campaign_id     text COLLATE "C" PRIMARY KEY,   -- byte order, as SQLite sorts
  job_title       text,
  contract_type   text,
  candidate_link  text,
  questions_count integer,
  status          text,
  created_at      timestamptz,
  field_versions  text NOT NULL DEFAULT '|'
);

CREATE TABLE candidates (
  candidate_id         text COLLATE "C" PRIMARY KEY,
  campaign_id          text COLLATE "C",
  first_name           text,
  last_name            text,
  email                text,
  phone                text,
  is_sourced           boolean NOT NULL DEFAULT false,
  call_queued          boolean,
  sms_sent             boolean,
  status               text CHECK (status IN ('pending', 'completed', 'voicemail', 'incomplete')),
  interview_score      double precision,
  interview_date       timestamptz,
  interview_started_at timestamptz,
  availability         text,
  availability_start   text,   -- as the service sends it (free text such as "immediately" is possible)
  salary_expectation   text,
  candidate_alignment  text,
  strengths            text,
  concerns             text,
  failure_reason       text,
  added_at             timestamptz,  -- when added or sourced: the date fallback of the list
  field_versions       text NOT NULL DEFAULT '|'
);
CREATE INDEX candidates_by_campaign ON candidates (campaign_id);

CREATE TABLE interview_responses (
  candidate_id text COLLATE "C" NOT NULL,
  position     integer NOT NULL,
  question     text,
  answer       text,
  score        double precision,
  explanation  text,
  PRIMARY KEY (candidate_id, position)
);

CREATE TABLE credits (
  account           integer PRIMARY KEY CHECK (account = 1),
  credits_remaining double precision,
  low_threshold     double precision,
  last_campaign_id  text,
  field_versions    text NOT NULL DEFAULT '|'
);
