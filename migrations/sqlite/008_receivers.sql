-- Receivers that project on this database (`prequal-hooks serve`, an application's
-- createReceiver): each refreshes its row every few seconds while it runs and removes it when it
-- closes. Commands that write events (replay, dead-letters reprocess) leave their projection to a
-- receiver whose beat is recent, so that its handlers run for them.
CREATE TABLE receivers (
  receiver_id TEXT PRIMARY KEY,
  pid         INTEGER NOT NULL,
  host        TEXT NOT NULL,
  started_at  TEXT NOT NULL,
  every_ms    INTEGER NOT NULL,
  seen_at     INTEGER NOT NULL  -- Unix ms
);
