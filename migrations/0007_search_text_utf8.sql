-- 0.4: the search text is the payload's text, UTF-8 decoded (issue #22: `ü` was kept as the escapes
-- `\303\274`, so a search for `303` found the Zürich event), and the index is rebuilt newest first.
--
-- switchboard_payload_text(payload): the first 64 KiB of the payload as text (what a search excerpt
-- shows), and switchboard_search_text(payload) the same lowercased (what a search matches) —
-- * a payload that is plain ASCII: the text itself (encode(…, 'escape') doubles its backslashes);
-- * valid UTF-8 (the pattern below checks the escape form: no NUL, every high byte in a complete,
--   shortest-form sequence, no surrogates, nothing past U+10FFFF): convert_from(…, 'UTF8'), which
--   cannot fail on what the pattern accepts; a sequence cut in two at 64 KiB is dropped first;
-- * anything else (binary, Latin-1, NUL): its ASCII text, the other bytes left out.
-- It never fails, whatever the bytes: one odd payload must not fail a statement over many rows.
CREATE OR REPLACE FUNCTION switchboard_payload_text(payload bytea) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
  SELECT CASE
    WHEN escaped !~ '\\[0-7]{3}' THEN replace(escaped, '\\', '\')
    WHEN escaped ~ '^(?:[^\\]|\\\\|\\30[2-7]\\2[0-7]{2}|\\3[1-3][0-7]\\2[0-7]{2}|\\340\\2[4-7][0-7]\\2[0-7]{2}|\\(?:34[1-7]|35[0-4]|35[67])\\2[0-7]{2}\\2[0-7]{2}|\\355\\2[0-3][0-7]\\2[0-7]{2}|\\360\\2[2-7][0-7]\\2[0-7]{2}\\2[0-7]{2}|\\36[1-3]\\2[0-7]{2}\\2[0-7]{2}\\2[0-7]{2}|\\364\\2[01][0-7]\\2[0-7]{2}\\2[0-7]{2})*$'
      THEN convert_from(decode(escaped, 'escape'), 'UTF8')
    ELSE regexp_replace(escaped, '\\(\\)|\\[0-7]{3}', '\1', 'g')
  END
  FROM (SELECT CASE WHEN length(payload) > 65536
                    THEN regexp_replace(encode(substring(payload from 1 for 65536), 'escape'), '\\3[0-7]{2}(?:\\2[0-7]{2}){0,2}$', '')
                    ELSE encode(payload, 'escape') END AS escaped) AS e
$fn$;

-- What a search matches: that text lowercased in the database's own collation, as a search pattern
-- is (`lower($1)`): convert_from answers in the "C" collation, whose lower() leaves non-ASCII
-- letters as they are.
CREATE OR REPLACE FUNCTION switchboard_search_text(payload bytea) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
  SELECT lower(switchboard_payload_text(payload) COLLATE "default")
$fn$;

-- Where the index stands. Events with an id above indexed_id are new (the tail, indexed first, in
-- id order); events at or below it whose (received_at, id) is below the floor are not indexed yet
-- (the backfill, newest first, so the events a developer searches for are indexed first); a NULL
-- floor means there is no backfill. backfill_rows: about how many the backfill has left
-- (index_progress, DESIGN §17).
ALTER TABLE search_state
  ADD COLUMN floor_received_at timestamptz,
  ADD COLUMN floor_id bigint,
  ADD COLUMN backfill_rows bigint NOT NULL DEFAULT 0;

-- Every stored event is indexed again, newest first, in the database's idle time; until then a
-- search reads what the index does not cover directly (src/core/store/search.ts).
TRUNCATE event_search;
UPDATE search_state SET
  indexed_id = COALESCE((SELECT max(id) FROM events), 0),
  floor_received_at = CASE WHEN EXISTS (SELECT 1 FROM events) THEN 'infinity'::timestamptz END,
  floor_id = CASE WHEN EXISTS (SELECT 1 FROM events) THEN 0 END,
  backfill_rows = COALESCE((SELECT max(id) - min(id) + 1 FROM events), 0);
