-- Receivers that project on this database (`prequal-hooks serve`, an application's
-- createReceiver, every replica): each refreshes its row every few seconds while it runs and
-- removes it when it closes. Commands that write events (replay, dead-letters reprocess) leave
-- their projection to a receiver whose beat is recent, so that its handlers run for them.
-- seen_at is the server's clock, so that replicas on hosts whose clocks differ agree on ages.
CREATE TABLE receivers (
  receiver_id text PRIMARY KEY,
  pid         integer NOT NULL,
  host        text NOT NULL,
  started_at  timestamptz NOT NULL,
  every_ms    integer NOT NULL,
  seen_at     timestamptz NOT NULL
);
