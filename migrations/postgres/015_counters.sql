-- The figures /metrics, the console's overview and `inspect` show, kept as counters instead of
-- counted at read time (a full scan of the inbox grew with it: 2.3 s for /metrics at 2.4 million
-- events). Triggers keep them in the transaction of every change to the rows they count, whatever
-- statement makes it, on every replica (an older replica still running during a rolling upgrade
-- included): the intake, claims and settlements, dead letters put back, handler failures,
-- erasures, retention, a rebuild, the removal of an account.
--
-- Names and keys as on SQLite (migrations/sqlite/016_counters.sql):
--   inbox                  key = state       rows of the inbox in that state
--   handler_failures       key = ''          handler failures kept
--   candidates             key = campaign_id candidates of the campaign
--   candidates:<status>    key = campaign_id of those, in that status
--   scores                 key = campaign_id completed candidates with a score: n, and `total` the sum of
--                                            their scores in units of 1e-9 (an exact integer sum)
--
-- Replicas write at once, and every intake and every settlement changes the same few counters of
-- an account: one row per counter would make their transactions queue on its lock, commit after
-- commit, and take locks in orders that can deadlock. So each server process (backend) adds to
-- rows of its own, `slot` = its pid: no two transactions ever wait on a counter row. A counter is
-- the sum of its slots; `fold_counters()` (run with the receivers' heartbeat) folds the slots of
-- backends gone into slot 0, so that the rows of a counter stay about as many as live connections.
CREATE TABLE counters (
  account text COLLATE "C" NOT NULL,
  name    text COLLATE "C" NOT NULL,
  key     text COLLATE "C" NOT NULL,
  slot    integer NOT NULL DEFAULT 0,
  n       bigint NOT NULL DEFAULT 0,
  total   bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (account, name, key, slot)
);

-- The functions keep the schema they were made in (SET search_path FROM CURRENT): a statement run
-- with another search_path still counts into this schema's counters.
CREATE FUNCTION counters_add(p_account text, p_name text, p_key text, p_n bigint, p_total bigint) RETURNS void
LANGUAGE sql SET search_path FROM CURRENT AS $$
  INSERT INTO counters (account, name, key, slot, n, total) VALUES (p_account, p_name, p_key, pg_backend_pid(), p_n, p_total)
  ON CONFLICT (account, name, key, slot) DO UPDATE SET n = counters.n + EXCLUDED.n, total = counters.total + EXCLUDED.total
$$;

CREATE FUNCTION inbox_counted() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN PERFORM counters_add(OLD.account, 'inbox', OLD.state, -1, 0); END IF;
  IF TG_OP <> 'DELETE' THEN PERFORM counters_add(NEW.account, 'inbox', NEW.state, 1, 0); END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER inbox_counted AFTER INSERT OR DELETE ON inbox FOR EACH ROW EXECUTE FUNCTION inbox_counted();
CREATE TRIGGER inbox_counted_update AFTER UPDATE OF state, account ON inbox FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.account IS DISTINCT FROM NEW.account) EXECUTE FUNCTION inbox_counted();

CREATE FUNCTION handler_failures_counted() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN PERFORM counters_add(NEW.account, 'handler_failures', '', 1, 0);
  ELSE PERFORM counters_add(OLD.account, 'handler_failures', '', -1, 0); END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER handler_failures_counted AFTER INSERT OR DELETE ON handler_failures FOR EACH ROW EXECUTE FUNCTION handler_failures_counted();

-- A candidate counts under its campaign (none while it has no campaign_id): once in `candidates`,
-- once under its status, and in `scores` when completed with a score. A change takes the old row
-- out and puts the new one in.
CREATE FUNCTION candidate_counted(c candidates, sign integer) RETURNS void
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF c.campaign_id IS NULL THEN RETURN; END IF;
  PERFORM counters_add(c.account, 'candidates', c.campaign_id, sign, 0);
  IF c.status IS NOT NULL THEN PERFORM counters_add(c.account, 'candidates:' || c.status, c.campaign_id, sign, 0); END IF;
  IF c.status = 'completed' AND c.interview_score IS NOT NULL THEN
    PERFORM counters_add(c.account, 'scores', c.campaign_id, sign, sign * floor(c.interview_score * 1000000000 + 0.5)::bigint);
  END IF;
END $$;
CREATE FUNCTION candidates_counted() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN PERFORM candidate_counted(OLD, -1); END IF;
  IF TG_OP <> 'DELETE' THEN PERFORM candidate_counted(NEW, 1); END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER candidates_counted AFTER INSERT OR DELETE ON candidates FOR EACH ROW EXECUTE FUNCTION candidates_counted();
CREATE TRIGGER candidates_counted_update AFTER UPDATE OF account, campaign_id, status, interview_score ON candidates FOR EACH ROW
  WHEN (OLD.account IS DISTINCT FROM NEW.account OR OLD.campaign_id IS DISTINCT FROM NEW.campaign_id
        OR OLD.status IS DISTINCT FROM NEW.status OR OLD.interview_score IS DISTINCT FROM NEW.interview_score)
  EXECUTE FUNCTION candidates_counted();

-- Folds the slots of backends that are gone into slot 0. A backend that took a gone one's pid
-- meanwhile only shares its row: its additions are in the row deleted (RETURNING reads the row as
-- committed), so nothing is lost or counted twice. One fold at a time; a busy one is skipped.
CREATE FUNCTION fold_counters() RETURNS void
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtext('prequal-hooks:fold_counters:' || current_schema())) THEN RETURN; END IF;
  WITH gone AS (
    DELETE FROM counters c WHERE c.slot <> 0 AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = c.slot)
    RETURNING account, name, key, n, total)
  INSERT INTO counters (account, name, key, slot, n, total)
    SELECT account, name, key, 0, SUM(n), SUM(total) FROM gone GROUP BY account, name, key
    ON CONFLICT (account, name, key, slot) DO UPDATE SET n = counters.n + EXCLUDED.n, total = counters.total + EXCLUDED.total;
END $$;

-- The figures of the rows already stored, counted once (as `rebuild` counts them again). The
-- triggers made above lock the tables against writes until this migration commits.
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
  SELECT account, 'scores', campaign_id, COUNT(*), SUM(floor(interview_score * 1000000000 + 0.5)::bigint) FROM candidates
    WHERE campaign_id IS NOT NULL AND status = 'completed' AND interview_score IS NOT NULL GROUP BY account, campaign_id;

-- The console's events per minute read the last hour of an account's inbox: by this index, not
-- by a scan of all of it.
CREATE INDEX inbox_by_received ON inbox (account, received_at);
