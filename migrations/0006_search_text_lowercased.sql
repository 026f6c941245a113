-- 0.3: the search text is kept lowercased (event-store.ts searchDoc), so a search matches it with
-- LIKE and a lowercased pattern: ILIKE lowercased every candidate's text on every search, about
-- 20 µs a row of ~1.2 KB against ~1 µs (docs/benchmarks.md). The trigram index is unchanged
-- (pg_trgm lowercases anyway).
--
-- The old text is dropped rather than rewritten here: an UPDATE of a million rows would hold the
-- start for minutes. The search indexer copies the text again in the database's idle time, and
-- until it has, a search reads the events it has not reached directly (a timed walk when there
-- are many of them: listEvents), so searches stay complete meanwhile.
TRUNCATE event_search;
UPDATE search_state SET indexed_id = 0;
