-- The figures /metrics, the console's overview and `inspect` show, kept as counters instead of
-- counted at read time (a full scan of the inbox grew with it: 2.3 s for /metrics at 2.4 million
-- events, run on the event loop). Triggers keep them in the transaction of every change to the
-- rows they count, whatever statement makes it: the intake, claims and settlements, dead letters
-- put back, handler failures, erasures, retention, a rebuild, the removal of an account, a bulk load.
--
-- Names and keys (account first, as every table of an account):
--   inbox                  key = state       rows of the inbox in that state
--   handler_failures       key = ''          handler failures kept
--   candidates             key = campaign_id candidates of the campaign
--   candidates:<status>    key = campaign_id of those, in that status (pending, completed, voicemail, incomplete)
--   scores                 key = campaign_id completed candidates with a score: n, and `total` the sum of their
--                                            scores in units of 1e-9, an integer, so that the sum is exact
--                                            and the same whatever the order of the changes
-- A counter is a sum of deltas: a row whose count came back to 0 stays.
CREATE TABLE counters (
  account TEXT    NOT NULL,
  name    TEXT    NOT NULL,
  key     TEXT    NOT NULL,
  n       INTEGER NOT NULL DEFAULT 0,
  total   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (account, name, key)
) WITHOUT ROWID;

CREATE TRIGGER inbox_counted_insert AFTER INSERT ON inbox BEGIN
  INSERT INTO counters (account, name, key, n) VALUES (NEW.account, 'inbox', NEW.state, 1)
    ON CONFLICT (account, name, key) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER inbox_counted_delete AFTER DELETE ON inbox BEGIN
  INSERT INTO counters (account, name, key, n) VALUES (OLD.account, 'inbox', OLD.state, -1)
    ON CONFLICT (account, name, key) DO UPDATE SET n = n - 1;
END;
CREATE TRIGGER inbox_counted_update AFTER UPDATE OF state, account ON inbox
  WHEN OLD.state IS NOT NEW.state OR OLD.account IS NOT NEW.account BEGIN
  INSERT INTO counters (account, name, key, n) VALUES (OLD.account, 'inbox', OLD.state, -1)
    ON CONFLICT (account, name, key) DO UPDATE SET n = n - 1;
  INSERT INTO counters (account, name, key, n) VALUES (NEW.account, 'inbox', NEW.state, 1)
    ON CONFLICT (account, name, key) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER handler_failures_counted_insert AFTER INSERT ON handler_failures BEGIN
  INSERT INTO counters (account, name, key, n) VALUES (NEW.account, 'handler_failures', '', 1)
    ON CONFLICT (account, name, key) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER handler_failures_counted_delete AFTER DELETE ON handler_failures BEGIN
  INSERT INTO counters (account, name, key, n) VALUES (OLD.account, 'handler_failures', '', -1)
    ON CONFLICT (account, name, key) DO UPDATE SET n = n - 1;
END;

-- A candidate counts under its campaign (none while it has no campaign_id): once in `candidates`,
-- once under its status, and in `scores` when completed with a score. A change takes the old row
-- out and puts the new one in.
CREATE TRIGGER candidates_counted_insert AFTER INSERT ON candidates WHEN NEW.campaign_id IS NOT NULL BEGIN
  INSERT INTO counters (account, name, key, n, total)
    SELECT NEW.account, name, NEW.campaign_id, 1, total FROM (
      SELECT 'candidates' AS name, 0 AS total
      UNION ALL SELECT 'candidates:' || NEW.status, 0 WHERE NEW.status IS NOT NULL
      UNION ALL SELECT 'scores', CAST(NEW.interview_score * 1000000000 + 0.5 AS INTEGER)
        WHERE NEW.status = 'completed' AND NEW.interview_score IS NOT NULL)
    WHERE true
    ON CONFLICT (account, name, key) DO UPDATE SET n = n + excluded.n, total = total + excluded.total;
END;
CREATE TRIGGER candidates_counted_delete AFTER DELETE ON candidates WHEN OLD.campaign_id IS NOT NULL BEGIN
  INSERT INTO counters (account, name, key, n, total)
    SELECT OLD.account, name, OLD.campaign_id, -1, -total FROM (
      SELECT 'candidates' AS name, 0 AS total
      UNION ALL SELECT 'candidates:' || OLD.status, 0 WHERE OLD.status IS NOT NULL
      UNION ALL SELECT 'scores', CAST(OLD.interview_score * 1000000000 + 0.5 AS INTEGER)
        WHERE OLD.status = 'completed' AND OLD.interview_score IS NOT NULL)
    WHERE true
    ON CONFLICT (account, name, key) DO UPDATE SET n = n + excluded.n, total = total + excluded.total;
END;
CREATE TRIGGER candidates_counted_update AFTER UPDATE OF account, campaign_id, status, interview_score ON candidates
  WHEN OLD.account IS NOT NEW.account OR OLD.campaign_id IS NOT NEW.campaign_id OR OLD.status IS NOT NEW.status
    OR OLD.interview_score IS NOT NEW.interview_score BEGIN
  INSERT INTO counters (account, name, key, n, total)
    SELECT OLD.account, name, OLD.campaign_id, -1, -total FROM (
      SELECT 'candidates' AS name, 0 AS total
      UNION ALL SELECT 'candidates:' || OLD.status, 0 WHERE OLD.status IS NOT NULL
      UNION ALL SELECT 'scores', CAST(OLD.interview_score * 1000000000 + 0.5 AS INTEGER)
        WHERE OLD.status = 'completed' AND OLD.interview_score IS NOT NULL)
    WHERE OLD.campaign_id IS NOT NULL
    ON CONFLICT (account, name, key) DO UPDATE SET n = n + excluded.n, total = total + excluded.total;
  INSERT INTO counters (account, name, key, n, total)
    SELECT NEW.account, name, NEW.campaign_id, 1, total FROM (
      SELECT 'candidates' AS name, 0 AS total
      UNION ALL SELECT 'candidates:' || NEW.status, 0 WHERE NEW.status IS NOT NULL
      UNION ALL SELECT 'scores', CAST(NEW.interview_score * 1000000000 + 0.5 AS INTEGER)
        WHERE NEW.status = 'completed' AND NEW.interview_score IS NOT NULL)
    WHERE NEW.campaign_id IS NOT NULL
    ON CONFLICT (account, name, key) DO UPDATE SET n = n + excluded.n, total = total + excluded.total;
END;

-- The figures of the rows already stored, counted once (as `rebuild` counts them again).
INSERT INTO counters (account, name, key, n)
  SELECT account, 'inbox', state, COUNT(*) FROM inbox GROUP BY account, state;
INSERT INTO counters (account, name, key, n)
  SELECT account, 'handler_failures', '', COUNT(*) FROM handler_failures GROUP BY account;
INSERT INTO counters (account, name, key, n, total)
  SELECT account, 'candidates', campaign_id, COUNT(*), 0 FROM candidates WHERE campaign_id IS NOT NULL GROUP BY account, campaign_id
  UNION ALL
  SELECT account, 'candidates:' || status, campaign_id, COUNT(*), 0 FROM candidates
    WHERE campaign_id IS NOT NULL AND status IS NOT NULL GROUP BY account, campaign_id, status
  UNION ALL
  SELECT account, 'scores', campaign_id, COUNT(*), SUM(CAST(interview_score * 1000000000 + 0.5 AS INTEGER)) FROM candidates
    WHERE campaign_id IS NOT NULL AND status = 'completed' AND interview_score IS NOT NULL GROUP BY account, campaign_id;

-- The console's events per minute read the last hour of an account's inbox: by this index, not
-- by a scan of all of it.
CREATE INDEX inbox_by_received ON inbox (account, received_at);
