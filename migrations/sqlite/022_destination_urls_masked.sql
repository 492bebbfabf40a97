-- A destination's `url` is the URL as shown (src/store/destinations.ts, maskedUrl): its user info,
-- its query's values and its fragment masked, the query's names kept
-- (`https://***@host/hook?key=***&mode=***`). Rows written before kept the query in clear, and
-- `destinations list`, the console and backups showed a credential in it. The whole URL has always
-- been sealed in `sealed` (under the accounts key): nothing is lost, and no key is needed here.
-- Masking a masked URL changes nothing.

-- The fragment (never sent), whole.
UPDATE destinations SET url = substr(url, 1, instr(url, '#') - 1) || '#***'
WHERE instr(url, '#') > 0 AND instr(url, '#') < length(url);

-- The query, part by part: `name=value` as `name=***`, a part without `=` (it may be a token) as `***`.
UPDATE destinations SET url = (
  WITH RECURSIVE
    pieces(base, query, fragment) AS (
      SELECT substr(url, 1, instr(url, '?')),
             CASE WHEN instr(url, '#') > 0 THEN substr(url, instr(url, '?') + 1, instr(url, '#') - instr(url, '?') - 1)
                  ELSE substr(url, instr(url, '?') + 1) END,
             CASE WHEN instr(url, '#') > 0 THEN substr(url, instr(url, '#')) ELSE '' END
    ),
    parts(rest, masked) AS (
      SELECT query || '&', NULL FROM pieces
      UNION ALL
      SELECT substr(rest, instr(rest, '&') + 1),
             CASE WHEN masked IS NULL THEN '' ELSE masked || '&' END ||
             CASE WHEN instr(rest, '&') = 1 THEN ''
                  WHEN instr(substr(rest, 1, instr(rest, '&') - 1), '=') > 0 THEN substr(rest, 1, instr(rest, '=')) || '***'
                  ELSE '***' END
      FROM parts WHERE rest <> ''
    )
  SELECT base || masked || fragment FROM parts, pieces WHERE rest = ''
)
WHERE instr(url, '?') > 0 AND (instr(url, '#') = 0 OR instr(url, '?') < instr(url, '#'))
  AND instr(url, '?') < length(url) AND substr(url, instr(url, '?') + 1, 1) <> '#';
