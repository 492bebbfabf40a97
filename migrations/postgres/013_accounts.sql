-- Several accounts in one database (docs/projection.md section 9). Every table that holds an
-- account's data carries it, and every key and every index looked up by key leads with it: identity
-- (section 1) and the raw-bytes hash are unique per account, handler keys are per account, and the
-- projected rows are keyed (account, id), so the same ids in two accounts name two rows that never
-- meet. Every row stored before is the default account's. The account sorts bytewise (COLLATE "C"),
-- as SQLite sorts it. Database-wide: settings, receivers, schema_migrations; erasure_hooks is keyed
-- by its erasure, which carries the account.
--
-- Locks and time. ADD COLUMN with a constant default rewrites nothing (the default is kept in the
-- catalogue), but it takes an ACCESS EXCLUSIVE lock on each table, held until the migration
-- commits: while it runs, every other connection's reads and writes of these tables wait (intake
-- elsewhere answers 503 after its lock timeout, and the sender retries). What takes time is
-- building the inbox's eight indexes again: each reads the whole table once and sorts its keys
-- (7 s for an inbox of a million rows here, more with a small maintenance_work_mem).
-- On a large inbox, run `prequal-hooks migrate` (no statement deadline) before starting this
-- version, since `serve` migrates under its 4 s statement deadline. The projected tables and
-- credits are small; credits is rewritten (its key changes type).
ALTER TABLE inbox ADD COLUMN account text COLLATE "C" NOT NULL DEFAULT 'default';
ALTER TABLE handler_failures ADD COLUMN account text COLLATE "C" NOT NULL DEFAULT 'default';
ALTER TABLE erasures ADD COLUMN account text COLLATE "C" NOT NULL DEFAULT 'default';
ALTER TABLE campaigns ADD COLUMN account text COLLATE "C" NOT NULL DEFAULT 'default';
ALTER TABLE candidates ADD COLUMN account text COLLATE "C" NOT NULL DEFAULT 'default';
ALTER TABLE interview_responses ADD COLUMN account text COLLATE "C" NOT NULL DEFAULT 'default';

-- Identity per account, filed as migration 011 files it: a dated event under (account, event_at,
-- identity). Each account's new keys land at the right edge of its own range, so intake still
-- writes one leaf page per account, not one per event. Undated rows (every row stored before 011)
-- keep their uniqueness on the identity alone, within the account.
DROP INDEX inbox_identity_undated;
DROP INDEX inbox_identity;
CREATE UNIQUE INDEX inbox_identity_undated ON inbox (account, identity) WHERE identity IS NOT NULL AND event_at IS NULL;
CREATE UNIQUE INDEX inbox_identity ON inbox (account, event_at, identity) WHERE identity IS NOT NULL AND event_at IS NOT NULL;
-- Only bodies that are not events have a hash: events no longer write a NULL entry here.
DROP INDEX inbox_raw_sha256;
CREATE UNIQUE INDEX inbox_raw_sha256 ON inbox (account, raw_sha256) WHERE raw_sha256 IS NOT NULL;

-- The work lists, by account in inbox order: an account's claims read its own rows only, and the
-- accounts with work are found by a few probes of the pending and handler indexes (a loose index
-- scan), however many rows one account has waiting.
DROP INDEX inbox_pending;
DROP INDEX inbox_handlers_pending;
DROP INDEX inbox_set_aside;
DROP INDEX inbox_by_key;
DROP INDEX inbox_reconciled;
CREATE INDEX inbox_pending ON inbox (account, inbox_id) WHERE state = 'pending';
CREATE INDEX inbox_handlers_pending ON inbox (account, inbox_id) WHERE handlers_pending;
CREATE INDEX inbox_set_aside ON inbox (account, state, inbox_id) WHERE state IN ('unknown', 'dead');
CREATE INDEX inbox_by_key ON inbox (account, handler_key, inbox_id) WHERE handler_key IS NOT NULL;
CREATE INDEX inbox_reconciled ON inbox (account, inbox_id) WHERE kind LIKE 'reconcile.%';

-- An account's handler failures listed by id; handler_failures_by_inbox stays (reached by inbox id).
CREATE INDEX handler_failures_by_account ON handler_failures (account, failure_id);

-- Erasures found by candidate within the account (the tombstones projection checks).
DROP INDEX erasures_by_candidate;
CREATE INDEX erasures_by_candidate ON erasures (account, candidate_id, erased_at);

-- The projected rows keyed within their account.
ALTER TABLE campaigns DROP CONSTRAINT campaigns_pkey, ADD PRIMARY KEY (account, campaign_id);
ALTER TABLE candidates DROP CONSTRAINT candidates_pkey, ADD PRIMARY KEY (account, candidate_id);
DROP INDEX candidates_by_campaign;
CREATE INDEX candidates_by_campaign ON candidates (account, campaign_id);
ALTER TABLE interview_responses DROP CONSTRAINT interview_responses_pkey, ADD PRIMARY KEY (account, candidate_id, position);

-- Credits: one row per account. Its key was the constant 1; the row it held is the default account's.
ALTER TABLE credits DROP CONSTRAINT credits_account_check;
ALTER TABLE credits ALTER COLUMN account TYPE text COLLATE "C" USING 'default';
ALTER TABLE credits ALTER COLUMN account SET DEFAULT 'default';
