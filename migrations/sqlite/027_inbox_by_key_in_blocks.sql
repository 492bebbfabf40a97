-- inbox_by_key finds a person's events (erasure, export, the event lists' filter by candidate).
-- Keyed by (account, handler_key, inbox_id), each new event's entry went to a random leaf, and a
-- batch of intake rewrote about a page of the index an event: at 10,000,000 events 2.44 pages an
-- insert against 0.32 on an empty database, most of what made ingest slower as the inbox grew
-- (`npm run bench:scale`). Keyed first by the block of 4,096 inbox ids an event falls in
-- (inbox_id >> 12), then the key, a batch writes into the last block's few leaves; a lookup probes
-- each block from the inbox's first id to its last (src/store/handler-keys.ts: KEY_BLOCKS_SQL),
-- 2,442 probes at 10,000,000 events (as changes_of_candidate, 025).
-- The handlers' claims ask for an earlier unsettled event of the same key: that is what
-- inbox_unsettled_by_key holds, only the rows pending projection or with handlers due, so it stays
-- small whatever the inbox holds.
DROP INDEX inbox_by_key;
CREATE INDEX inbox_by_key ON inbox (account, inbox_id >> 12, handler_key) WHERE handler_key IS NOT NULL;
CREATE INDEX inbox_unsettled_by_key ON inbox (account, handler_key, inbox_id) WHERE handlers_pending = 1 OR state = 'pending';
