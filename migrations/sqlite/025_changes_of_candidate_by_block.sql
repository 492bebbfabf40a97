-- An erasure finds a person's changes by their candidate (018_changes.sql), but an index keyed by
-- (account, id) took each change at a random leaf: a batch of a hundred changes rewrote about a
-- hundred pages of it at commit, most of what recording changes cost the projection. Keyed first by
-- the block of 1,024 numbers the change falls in (seq >> 10), each batch writes into the last
-- block's few leaves; a lookup probes each block still held for the id (src/store/candidate-changes.ts),
-- a thousand probes for a million changes.
DROP INDEX changes_of_candidate;
CREATE INDEX changes_of_candidate ON changes (account, seq >> 10, id) WHERE entity = 'candidate';
