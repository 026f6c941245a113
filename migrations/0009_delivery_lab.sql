-- Delivery lab (DESIGN §15).
--
-- Attempts: every delivery with the same (provider, external_id) is an attempt of the first
-- event. The count sits on the event row, so every list query reads it with the row (no join);
-- the log keeps the newest attempts' answers. The first attempt has a log row only when an
-- answer rule decided it (otherwise it is the event itself: received_at, the normal answer).
ALTER TABLE events ADD COLUMN attempts integer NOT NULL DEFAULT 1;

CREATE TABLE event_attempts (
  event_id  bigint      NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  attempt   integer     NOT NULL CHECK (attempt > 0),
  at        timestamptz NOT NULL,
  -- The status the provider was answered.
  status    integer     NOT NULL,
  -- The answer rule that decided it, numbered from 1 as the UI and the terminal show it; null: the normal answer.
  rule      integer,
  delay_ms  integer     NOT NULL DEFAULT 0,
  PRIMARY KEY (event_id, attempt)
);

-- Chaos (replays and forward rules): what a copy was — a duplicate, a delayed send, a reordered one.
ALTER TABLE replays ADD COLUMN chaos text CHECK (chaos IN ('duplicate', 'delayed', 'reordered'));
