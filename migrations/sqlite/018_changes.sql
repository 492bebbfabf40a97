-- The changes of the projected rows (docs/projection.md section 10), recorded in the transaction
-- that makes them: per account, `seq` from 1 in commit order (SQLite has one writer at a time, so
-- the order of `change_heads.last_seq` is the order of commits). `row` and `events` are JSON text,
-- written by the library; `row` is NULL for an erasure. Retention drops the oldest changes a
-- prefix at a time and keeps, in `change_heads.dropped_through`, the highest `seq` it dropped:
-- a reader whose cursor is below it has missed changes.
CREATE TABLE changes (
  -- A rowid table (the numbering's key is the index below): a change is some hundreds of bytes of
  -- JSON, which a WITHOUT ROWID table would push into overflow pages, a page or two a change.
  change_id INTEGER PRIMARY KEY,
  account TEXT NOT NULL,
  seq INTEGER NOT NULL,
  entity TEXT NOT NULL CHECK (entity IN ('campaign', 'candidate', 'credits')),
  id TEXT NOT NULL,
  op TEXT NOT NULL CHECK (op IN ('upsert', 'erase')),
  row TEXT,
  at TEXT NOT NULL,
  events TEXT NOT NULL
);
CREATE UNIQUE INDEX changes_by_seq ON changes (account, seq);
-- An erasure redacts a person's earlier changes: found by id, without reading the account's feed.
CREATE INDEX changes_of_candidate ON changes (account, id) WHERE entity = 'candidate';
CREATE TABLE change_heads (
  account TEXT PRIMARY KEY,
  last_seq INTEGER NOT NULL DEFAULT 0,
  dropped_through INTEGER NOT NULL DEFAULT 0,
  -- The last seq when a rebuild of the account started; NULL when none is under way.
  rebuilding_from INTEGER
) WITHOUT ROWID;

-- A rebuild's copy of the account's projected rows as they were (the columns of section 4), kept
-- until its end compares the new state with it: the changes a rebuild records are the difference
-- (src/store/rebuild-changes.ts).
CREATE TABLE rebuild_campaigns (
  account TEXT NOT NULL,
  campaign_id TEXT NOT NULL,
  job_title,
  contract_type,
  candidate_link,
  questions_count,
  status,
  created_at,
  PRIMARY KEY (account, campaign_id)
) WITHOUT ROWID;
CREATE TABLE rebuild_candidates (
  account TEXT NOT NULL,
  candidate_id TEXT NOT NULL,
  campaign_id,
  first_name,
  last_name,
  email,
  phone,
  is_sourced,
  call_queued,
  sms_sent,
  status,
  interview_score,
  interview_date,
  interview_started_at,
  availability,
  availability_start,
  salary_expectation,
  candidate_alignment,
  strengths,
  concerns,
  failure_reason,
  PRIMARY KEY (account, candidate_id)
) WITHOUT ROWID;
CREATE TABLE rebuild_credits (
  account TEXT PRIMARY KEY,
  credits_remaining,
  low_threshold,
  last_campaign_id
) WITHOUT ROWID;
