-- 0.3: indexed search, and an index for every list filter (test/core/store-plans.test.ts).

-- Trigram indexes answer a case-insensitive substring search (ILIKE '%…%') without reading
-- every payload. PGlite loads the extension's code at open (extensions: { pg_trgm }).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- (The payload's trigram index first lived here, on events itself; 0005 moved it to a side
-- table filled off the write path, so this migration no longer builds it: on a large data dir
-- that took minutes, and every insert paid for it.)
CREATE INDEX events_type_trgm_idx ON events USING gin (event_type gin_trgm_ops); -- moved by 0005

-- external_id without a provider (the unique index leads with provider).
CREATE INDEX events_external_id_idx ON events (external_id) WHERE external_id IS NOT NULL;
