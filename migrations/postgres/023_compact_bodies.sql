-- Raw bodies deflated with a dictionary of the service's event shapes (src/store/bodies.ts), the
-- codec beside each: NULL for a row stored before (its bytes as received), 0 for a body kept as
-- received, 1 for deflate with dictionary 1. Intake writes the compact form from now on; the rows
-- already stored are rewritten after the migrations by a batched step that needs JavaScript
-- (src/store/postgres/compact-bodies.ts), found by the partial index below, which empties as it
-- goes and stays empty (a new row is never NULL): readers take both forms meanwhile.
ALTER TABLE inbox ADD COLUMN codec integer;
-- `data.campaign_id` of an accepted body, as text: the event lists show and filter by it, and
-- can no longer read it from the body with SQL. Set at intake, and by the rewrite for older rows
-- (whose body SQL still reads while their codec is NULL).
ALTER TABLE inbox ADD COLUMN campaign_id text;
CREATE INDEX inbox_uncompacted ON inbox (inbox_id) WHERE codec IS NULL;
