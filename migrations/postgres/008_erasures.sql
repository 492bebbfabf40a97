-- Erasure of a candidate (docs/projection.md section 8): the audit trail, which also acts as the
-- tombstone later events are checked against. It holds no name, e-mail or phone.
CREATE TABLE erasures (
  erasure_id      bigserial PRIMARY KEY,
  candidate_id    text COLLATE "C" NOT NULL,
  erased_at       timestamptz NOT NULL,
  reason          text NOT NULL,
  events_redacted integer NOT NULL
);
CREATE INDEX erasures_by_candidate ON erasures (candidate_id, erased_at);

-- The events that name a candidate are found through the handler key ('candidate:<id>', set at
-- intake since migration 006): rows stored before it get theirs now (bodies with a NUL escape or
-- nested 1,000 levels and more, which PostgreSQL's JSON cannot read, keep none), and every key
-- is indexed.
UPDATE inbox
   SET handler_key = 'candidate:' || (convert_from(raw, 'UTF8')::json -> 'data' ->> 'candidate_id')
 WHERE handler_key IS NULL AND verdict = 'accepted'
   AND strpos(convert_from(raw, 'UTF8'), '\u0000') = 0
   AND length(convert_from(raw, 'UTF8')) - length(translate(convert_from(raw, 'UTF8'), '[{', '')) < 1000
   AND (convert_from(raw, 'UTF8')::json -> 'data' ->> 'candidate_id') IS NOT NULL;
CREATE INDEX inbox_by_subject ON inbox (handler_key) WHERE handler_key IS NOT NULL;
