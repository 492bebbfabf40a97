-- The handler key (`candidate:<id>`, `campaign:<id>` or `credits`) is kept as bytes, a tag then the
-- id (src/store/handler-keys.ts): 17 bytes for a candidate's UUID against 46, in the row and in
-- inbox_by_key (rebuilt by the type change), the index that finds a person's events and orders
-- their handlers.
--   00 credits; 01 + 16 bytes: a candidate whose id is a UUID in lowercase hex; 02 + UTF-8: any
--   other candidate id; 03 + UTF-8: a campaign; 04 + UTF-8: any other key, whole.
ALTER TABLE inbox ALTER COLUMN handler_key TYPE bytea USING (
  CASE WHEN handler_key IS NULL THEN NULL
       WHEN handler_key = 'credits' THEN '\x00'::bytea
       WHEN handler_key ~ '^candidate:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
         THEN '\x01'::bytea || decode(replace(substr(handler_key, 11), '-', ''), 'hex')
       WHEN left(handler_key, 10) = 'candidate:' THEN '\x02'::bytea || convert_to(substr(handler_key, 11), 'UTF8')
       WHEN left(handler_key, 9) = 'campaign:' THEN '\x03'::bytea || convert_to(substr(handler_key, 10), 'UTF8')
       ELSE '\x04'::bytea || convert_to(handler_key, 'UTF8') END);
