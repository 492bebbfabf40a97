-- The changes of the projected rows (docs/projection.md section 10), recorded in the transaction
-- that makes them. `seq` is not a sequence: two transactions could take 10 and 11 and commit 11
-- first, and a reader at 11 would never see 10. Each transaction that records changes takes its
-- numbers last, by updating its account's row of `change_heads`, whose lock it holds until it
-- commits: the next one waits for that commit before it numbers, so numbers follow commits.
-- `row` and `events` are JSON text written by the library (the same bytes on both engines);
-- `row` is NULL for an erasure. Retention drops the oldest changes a prefix at a time and keeps,
-- in `dropped_through`, the highest `seq` it dropped.
CREATE TABLE changes (
  account text NOT NULL,
  seq bigint NOT NULL,
  entity text NOT NULL CHECK (entity IN ('campaign', 'candidate', 'credits')),
  id text NOT NULL,
  op text NOT NULL CHECK (op IN ('upsert', 'erase')),
  row text,
  at text NOT NULL,
  events text NOT NULL,
  PRIMARY KEY (account, seq)
);
-- An erasure redacts a person's earlier changes: found by id, without reading the account's feed.
CREATE INDEX changes_of_candidate ON changes (account, id) WHERE entity = 'candidate';
CREATE TABLE change_heads (
  account text PRIMARY KEY,
  last_seq bigint NOT NULL DEFAULT 0,
  dropped_through bigint NOT NULL DEFAULT 0,
  -- The last seq when a rebuild of the account started; NULL when none is under way.
  rebuilding_from bigint
);

-- A rebuild's copy of the account's projected rows as they were (the columns of section 4), kept
-- until its end compares the new state with it: the changes a rebuild records are the difference
-- (src/store/rebuild-changes.ts).
CREATE TABLE rebuild_campaigns (
  account text NOT NULL,
  campaign_id text NOT NULL,
  job_title text,
  contract_type text,
  candidate_link text,
  questions_count integer,
  status text,
  created_at timestamptz,
  PRIMARY KEY (account, campaign_id)
);
CREATE TABLE rebuild_candidates (
  account text NOT NULL,
  candidate_id text NOT NULL,
  campaign_id text,
  first_name text,
  last_name text,
  email text,
  phone text,
  is_sourced boolean,
  call_queued boolean,
  sms_sent boolean,
  status text,
  interview_score double precision,
  interview_date timestamptz,
  interview_started_at timestamptz,
  availability text,
  availability_start text,
  salary_expectation text,
  candidate_alignment text,
  strengths text,
  concerns text,
  failure_reason text,
  PRIMARY KEY (account, candidate_id)
);
CREATE TABLE rebuild_credits (
  account text PRIMARY KEY,
  credits_remaining double precision,
  low_threshold double precision,
  last_campaign_id text
);
