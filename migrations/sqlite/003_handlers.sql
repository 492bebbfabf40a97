-- Application handlers run after the projection commits, at least once per distinct event:
-- the mark below is set in the projection's transaction and cleared once every handler has
-- succeeded or been given up on, so a crash in between runs them again at the next start.
ALTER TABLE inbox ADD COLUMN handlers_pending INTEGER NOT NULL DEFAULT 0;
CREATE INDEX inbox_handlers_pending ON inbox (inbox_id) WHERE handlers_pending = 1;

-- A handler that kept failing: a dead letter of the handler, not of the event (which is projected).
CREATE TABLE handler_failures (
  failure_id  INTEGER PRIMARY KEY,
  inbox_id    INTEGER NOT NULL REFERENCES inbox (inbox_id),
  handler     TEXT    NOT NULL,
  error       TEXT    NOT NULL,
  attempts    INTEGER NOT NULL,
  failed_at   TEXT    NOT NULL
);
CREATE INDEX handler_failures_by_inbox ON handler_failures (inbox_id);
