-- 0.3: indexed search, and an index for every list filter (test/core/store-plans.test.ts).

-- Trigram indexes answer a case-insensitive substring search (ILIKE '%…%') without reading
-- every payload. PGlite loads the extension's code at open (extensions: { pg_trgm }).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- The payload is bytes and may be any encoding, or binary: it is indexed through
-- encode(…, 'escape'), which never fails (bytes >= 0x80 and NUL become \ooo, backslash \\).
-- Only the first 64 KiB: trigram extraction is linear in the text and runs on every insert.
-- The store's query must repeat this exact expression (event-store.ts PAYLOAD_TEXT).
CREATE INDEX events_payload_trgm_idx ON events
  USING gin ((encode(substring(payload from 1 for 65536), 'escape')) gin_trgm_ops);
CREATE INDEX events_type_trgm_idx ON events USING gin (event_type gin_trgm_ops);

-- external_id without a provider (the unique index leads with provider).
CREATE INDEX events_external_id_idx ON events (external_id) WHERE external_id IS NOT NULL;
