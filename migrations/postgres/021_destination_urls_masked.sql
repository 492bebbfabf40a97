-- A destination's `url` is the URL as shown (src/store/destinations.ts, maskedUrl): its user info,
-- its query's values and its fragment masked, the query's names kept
-- (`https://***@host/hook?key=***&mode=***`). Rows written before kept the query in clear, and
-- `destinations list`, the console and pg_dump showed a credential in it. The whole URL has always
-- been sealed in `sealed` (under the accounts key): nothing is lost, and no key is needed here.
-- Masking a masked URL changes nothing. (The values replaced stay in dead row versions until
-- VACUUM; a base backup or WAL archived before holds them.)

-- The fragment (never sent), whole.
UPDATE destinations SET url = substring(url from '^[^#]*') || '#***' WHERE url ~ '#.';

-- The query, part by part: `name=value` as `name=***`, a part without `=` (it may be a token) as `***`.
UPDATE destinations SET url =
  substring(url from '^[^?#]*\?')
  || (SELECT string_agg(CASE WHEN part = '' THEN ''
                             WHEN position('=' in part) > 0 THEN split_part(part, '=', 1) || '=***'
                             ELSE '***' END, '&' ORDER BY n)
        FROM regexp_split_to_table(substring(url from '^[^?#]*\?([^#]*)'), '&') WITH ORDINALITY AS t(part, n))
  || coalesce(substring(url from '#.*$'), '')
WHERE url ~ '^[^?#]*\?[^#]';
