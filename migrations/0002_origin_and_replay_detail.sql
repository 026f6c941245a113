-- 0.2: where an event came from, what a replay sent, and how a rejection was cut.

-- 'provider' (a real delivery), 'test' (switchboard trigger / send_test_event, built and signed
-- here), 'import' (switchboard import). Test events are shown as TEST everywhere.
ALTER TABLE events ADD COLUMN origin text NOT NULL DEFAULT 'provider'
  CHECK (origin IN ('provider', 'test', 'import'));
CREATE INDEX events_origin_received_idx ON events (origin, received_at DESC, id DESC);

-- Who asked for a replay, and whether it was sent as stored: an edited payload, headers the
-- caller overrode (names only) and the request headers actually sent (sanitized).
ALTER TABLE replays DROP CONSTRAINT replays_requested_by_check;
ALTER TABLE replays ADD CONSTRAINT replays_requested_by_check
  CHECK (requested_by IN ('ui', 'api', 'mcp', 'forward', 'cli'));
ALTER TABLE replays ADD COLUMN payload_edited boolean NOT NULL DEFAULT false;
ALTER TABLE replays ADD COLUMN headers_overridden jsonb NOT NULL DEFAULT '[]'::jsonb;
ALTER TABLE replays ADD COLUMN request_headers jsonb;
ALTER TABLE replays ADD COLUMN warning text;

-- A rejection keeps at most a few KB of headers; this says when some were cut.
ALTER TABLE rejections ADD COLUMN headers_truncated boolean NOT NULL DEFAULT false;
