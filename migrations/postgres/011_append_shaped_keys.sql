-- Intake's indexes grow at their right edge. A B-tree keyed by a random value (a
-- SHA-256, a candidate id) puts each new row on a different leaf page: each one written to the
-- WAL, whole after a checkpoint.
--
-- 1. The identity's uniqueness (docs/projection.md section 1) is kept on (event_at, identity):
--    `event_at` is the instant of the event's timestamp (Unix ms), which the identity determines
--    (the timestamp is part of what it hashes), so the pair is unique exactly when the identity is.
--    Events arrive close to their timestamp: new keys land at the index's right edge.
--    Rows with no readable instant (a timestamp outside the contract's form) and every row stored
--    before this migration keep event_at NULL and their uniqueness on the identity alone
--    (inbox_identity_undated). Intake looks a dated event up there too, so a redelivery of an
--    event stored before the upgrade is still a duplicate.
ALTER TABLE inbox ADD COLUMN event_at bigint;
ALTER TABLE inbox DROP CONSTRAINT inbox_identity_key;
CREATE UNIQUE INDEX inbox_identity_undated ON inbox (identity) WHERE identity IS NOT NULL AND event_at IS NULL;
CREATE UNIQUE INDEX inbox_identity ON inbox (event_at, identity) WHERE identity IS NOT NULL AND event_at IS NOT NULL;
-- 2. One index by handler key instead of two (inbox_handlers_by_key for handler claims, partial,
--    so its entries were also deleted at projection; inbox_by_subject for erasure): every row's
--    entry, written once. Handler claims bound their look-back to the oldest row still unsettled.
DROP INDEX inbox_handlers_by_key;
DROP INDEX inbox_by_subject;
CREATE INDEX inbox_by_key ON inbox (handler_key, inbox_id) WHERE handler_key IS NOT NULL;
