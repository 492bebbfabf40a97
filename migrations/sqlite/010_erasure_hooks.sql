-- The application's onErase hooks owe a call for every erasure (at least once): one row per
-- erasure until every hook has succeeded. Erasures made before this migration are owed too.
CREATE TABLE erasure_hooks (
  erasure_id    INTEGER PRIMARY KEY REFERENCES erasures (erasure_id),
  rounds        INTEGER NOT NULL DEFAULT 0,  -- rounds of attempts that failed
  due_at        TEXT    NOT NULL,            -- the next round, UTC ISO 8601 with milliseconds
  claimed_until TEXT,                        -- a process is calling the hooks until then
  last_error    TEXT                         -- the error's class and code only: its message may name the person
);
INSERT INTO erasure_hooks (erasure_id, due_at) SELECT erasure_id, erased_at FROM erasures;
CREATE INDEX erasure_hooks_by_due ON erasure_hooks (due_at);
