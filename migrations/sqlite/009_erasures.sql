-- Erasure of a candidate (docs/projection.md section 8): the audit trail, which also acts as the
-- tombstone later events are checked against. It holds no name, e-mail or phone.
CREATE TABLE erasures (
  erasure_id      INTEGER PRIMARY KEY,
  candidate_id    TEXT    NOT NULL,
  erased_at       TEXT    NOT NULL,   -- UTC ISO 8601 with milliseconds
  reason          TEXT    NOT NULL,
  events_redacted INTEGER NOT NULL
);
CREATE INDEX erasures_by_candidate ON erasures (candidate_id, erased_at);

-- The events that name a candidate are found through the handler key ('candidate:<id>', set at
-- intake since migration 006): rows stored before it get theirs now, and every key is indexed.
UPDATE inbox
   SET handler_key = 'candidate:' || CAST(json_extract(CAST(raw AS TEXT), '$.data.candidate_id') AS TEXT)
 WHERE handler_key IS NULL AND verdict = 'accepted' AND json_valid(CAST(raw AS TEXT))
   AND json_type(CAST(raw AS TEXT), '$.data.candidate_id') IS NOT NULL
   AND json_type(CAST(raw AS TEXT), '$.data.candidate_id') <> 'null';
CREATE INDEX inbox_by_subject ON inbox (handler_key) WHERE handler_key IS NOT NULL;
