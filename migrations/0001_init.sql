-- switchboard event log. The same file runs on PGlite and on PostgreSQL.

CREATE TABLE events (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  provider      text        NOT NULL,
  family        text        NOT NULL CHECK (family IN ('webhook', 'queue')),
  event_type    text,
  external_id   text,
  trust_mode    text        NOT NULL CHECK (trust_mode IN ('signed', 'token', 'open', 'queue')),
  verified      boolean     NOT NULL,
  verify_detail text,
  content_type  text,
  headers       jsonb       NOT NULL DEFAULT '{}'::jsonb,
  payload       bytea       NOT NULL,
  payload_size  integer     NOT NULL,
  source_ip     text,
  received_at   timestamptz NOT NULL DEFAULT now()
);

-- Keyset pagination is on (received_at, id); one composite index per filterable column keeps a
-- rare-value filter fast without relying on planner statistics (PGlite never autoanalyzes).
CREATE INDEX events_received_idx ON events (received_at DESC, id DESC);
CREATE INDEX events_provider_received_idx ON events (provider, received_at DESC, id DESC);
CREATE INDEX events_type_received_idx ON events (event_type, received_at DESC, id DESC);
CREATE INDEX events_trust_received_idx ON events (trust_mode, received_at DESC, id DESC);
-- Redeliveries (same provider delivery id) dedupe to the first event.
CREATE UNIQUE INDEX events_provider_external_id_key ON events (provider, external_id)
  WHERE external_id IS NOT NULL;

CREATE TABLE replays (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id         bigint      NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  target_url       text        NOT NULL,
  resigned         boolean     NOT NULL,
  delivered        boolean     NOT NULL,
  response_status  integer,
  response_ms      integer,
  response_headers jsonb,
  response_body    bytea,
  error            text,
  requested_by     text        NOT NULL CHECK (requested_by IN ('ui', 'mcp', 'forward')),
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX replays_event_idx ON replays (event_id, created_at DESC, id DESC);

CREATE TABLE rejections (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  provider    text        NOT NULL,
  reason      text        NOT NULL,
  hint        text,
  headers     jsonb       NOT NULL DEFAULT '{}'::jsonb,
  body_size   integer     NOT NULL,
  body_sha256 text        NOT NULL,
  source_ip   text,
  received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX rejections_received_idx ON rejections (received_at DESC, id DESC);
CREATE INDEX rejections_provider_received_idx ON rejections (provider, received_at DESC, id DESC);
