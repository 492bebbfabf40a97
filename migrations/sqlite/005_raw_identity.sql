-- A body that is not an event (not JSON, not an envelope, or JSON that canonical JSON cannot
-- represent faithfully: invalid UTF-8, a number beyond the double range, a lone surrogate) has
-- no event identity. It is kept under the SHA-256 of its raw bytes, so that the sender's retries
-- of one bad body (it retries 4xx answers too) make one dead letter, not four.
-- A column of its own rather than a prefix in `identity`: both are SHA-256 hex, and a raw-bytes
-- hash must never be taken for an event identity, by the unique index or by anyone reading it.
-- Rows stored before this migration keep NULL: SQLite has no SHA-256 to fill them in.
ALTER TABLE inbox ADD COLUMN raw_sha256 TEXT;
CREATE UNIQUE INDEX inbox_raw_sha256 ON inbox (raw_sha256);
