-- 0.3: the payload search index moves off the write path.
--
-- A trigram index on events' payload made every insert extract and index a few hundred trigrams
-- (about 4× the cost of the rest of the row on the embedded database: docs/benchmarks.md). The
-- text a search matches now lives in event_search, filled in the background by the search
-- indexer (src/core/store/search-indexer.ts) on the embedded database, and in the insert
-- statement itself on PostgreSQL. Events above search_state.indexed_id are not indexed yet;
-- a search reads them directly (a bounded tail: the indexer keeps up in idle time).
DROP INDEX IF EXISTS events_payload_trgm_idx;
-- The event type's trigram index moves along (it cost ~7 % of an insert).
DROP INDEX IF EXISTS events_type_trgm_idx;

-- doc is encode(substring(payload from 1 for 65536), 'escape') — event-store.ts PAYLOAD_TEXT —
-- and event_type the event's type. No foreign key: retention deletes both in one statement, and
-- an FK check per insert is not free.
CREATE TABLE event_search (
  event_id   bigint PRIMARY KEY,
  doc        text   NOT NULL,
  event_type text
);
CREATE INDEX event_search_doc_trgm_idx ON event_search USING gin (doc gin_trgm_ops);
CREATE INDEX event_search_type_trgm_idx ON event_search USING gin (event_type gin_trgm_ops);

CREATE TABLE search_state (
  singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  indexed_id bigint  NOT NULL DEFAULT 0
);
INSERT INTO search_state DEFAULT VALUES;
