-- Shapes (DESIGN §16): the inferred schema of every (provider, event_type), kept off the write
-- path by a background job (src/core/shapes/tracker.ts) in slices (DESIGN §17).

-- One row per type: its fields as a jsonb list (src/core/shapes/infer.ts FieldStats, ≤ 2,000),
-- how many events made it, and the events that could not count (not JSON, too large to walk).
CREATE TABLE shapes (
  provider          text        NOT NULL,
  event_type        text        NOT NULL,
  events_seen       bigint      NOT NULL DEFAULT 0,
  first_seen        timestamptz,
  last_seen         timestamptz,
  truncated         boolean     NOT NULL DEFAULT false,
  fields            jsonb       NOT NULL DEFAULT '[]'::jsonb,
  field_count       integer     NOT NULL DEFAULT 0,
  skipped_not_json  bigint      NOT NULL DEFAULT 0,
  skipped_too_large bigint      NOT NULL DEFAULT 0,
  drift_events      bigint      NOT NULL DEFAULT 0,
  last_drift_at     timestamptz,
  updated_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, event_type)
);

-- How far the tracker has read (events above shaped_id are not in a shape yet). generation
-- moves when shapes are cleared or reset, so a tracker holding shapes in memory drops them.
-- Starts at 0: an upgraded data dir gets the shapes of the events it already holds.
CREATE TABLE shape_state (
  shaped_id  bigint  NOT NULL,
  generation integer NOT NULL
);
INSERT INTO shape_state (shaped_id, generation) VALUES (0, 0);

-- What the tracker found about one event, only when there is something to say: its drift from
-- the type's shape before it, and (GitHub) where it breaks the provider's published schema.
CREATE TABLE event_shapes (
  event_id        bigint      PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
  provider        text        NOT NULL,
  event_type      text        NOT NULL,
  received_at     timestamptz NOT NULL,
  drift           jsonb,
  spec_violations jsonb
);
-- The list's drift filter walks this newest first; a type's drift history likewise.
CREATE INDEX event_shapes_drift_idx ON event_shapes (received_at DESC, event_id DESC) WHERE drift IS NOT NULL;
CREATE INDEX event_shapes_type_drift_idx ON event_shapes (provider, event_type, received_at DESC, event_id DESC) WHERE drift IS NOT NULL;
