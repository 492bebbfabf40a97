-- A body that is not an event (not JSON, not an envelope, or JSON that canonical JSON cannot
-- represent faithfully) has no event identity. It is kept under the SHA-256 of its raw bytes, so
-- that the sender's retries of one bad body make one dead letter, not four. A column of its own:
-- a raw-bytes hash must never be taken for an event identity.
ALTER TABLE inbox ADD COLUMN raw_sha256 text;
CREATE UNIQUE INDEX inbox_raw_sha256 ON inbox (raw_sha256);
