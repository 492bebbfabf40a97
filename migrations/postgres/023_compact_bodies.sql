-- A compact inbox: the same rows, ids and states, in fewer bytes.
-- 1. The identity (docs/projection.md section 1, a SHA-256) is kept as its 32 bytes rather than 64
--    hex characters, in the row and in the unique indexes led by it (rebuilt by the type change).
--    The store reads it back as hex: nothing above it, and nothing a user sees, changes.
ALTER TABLE inbox ALTER COLUMN identity TYPE bytea USING decode(identity, 'hex');
-- 2. Raw bodies are deflated with a dictionary of the service's event shapes (src/store/bodies.ts),
--    the codec beside each: NULL for a row stored before (its bytes as received), 0 for a body kept
--    as received, 1 for deflate with dictionary 1. Intake writes the compact form from now on; the
--    rows already stored are rewritten after the migrations by a batched step that needs JavaScript
--    (src/store/postgres/compact-bodies.ts), in inbox order up to the last row stored now, its
--    progress in `settings` (compact_bodies), removed once done: readers take both forms meanwhile.
--    No index names the codec, so that the rewrite's updates touch no index (heap-only tuples).
ALTER TABLE inbox ADD COLUMN codec integer;
-- 3. `campaign_id`: `data.campaign_id` of an accepted body, as text. The event lists show and
--    filter by it, and can no longer read it from the body with SQL. Set at intake, and by the
--    rewrite for older rows (whose body SQL still reads while their codec is NULL).
ALTER TABLE inbox ADD COLUMN campaign_id text;
INSERT INTO settings (key, value, updated_at)
  SELECT 'compact_bodies', json_build_object('after', 0, 'last', COALESCE(MAX(inbox_id), 0))::text, now() FROM inbox;
