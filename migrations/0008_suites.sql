-- Suites (DESIGN §14): captured events kept as a regression suite for the developer's handler.
--
-- A suite's cases are copies of events, not references: retention, clearEvents or deleting the
-- source event never changes a suite (no foreign key to events; source_event_id is a note).

CREATE TABLE suites (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name            text        NOT NULL UNIQUE CHECK (name ~ '^[a-z0-9][a-z0-9_.-]{0,62}$'),
  -- JSONPath patterns whose values are not compared (written, imported or learned).
  ignore          jsonb       NOT NULL DEFAULT '[]'::jsonb,
  -- Response header names that are compared (none by default).
  compare_headers jsonb       NOT NULL DEFAULT '[]'::jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);

-- One row per case, numbered from 1 in suite order; the event's fields as export writes them.
CREATE TABLE suite_cases (
  suite_id        bigint      NOT NULL REFERENCES suites (id) ON DELETE CASCADE,
  position        integer     NOT NULL CHECK (position > 0),
  source_event_id bigint,
  provider        text        NOT NULL,
  -- The provider's kind when the case was made (the suite file's header lists it).
  kind            text,
  family          text        NOT NULL,
  event_type      text,
  external_id     text,
  origin          text        NOT NULL,
  trust_mode      text        NOT NULL,
  verified        boolean     NOT NULL,
  verify_detail   text,
  content_type    text,
  source_ip       text,
  headers         jsonb       NOT NULL,
  payload         bytea       NOT NULL,
  -- length(payload), kept so that reading a step's sizes never touches the payloads.
  payload_size    integer     NOT NULL,
  received_at     timestamptz NOT NULL,
  PRIMARY KEY (suite_id, position)
);

-- The accepted answer of each case. Replacing a suite's cases drops these.
CREATE TABLE suite_expectations (
  suite_id    bigint  NOT NULL REFERENCES suites (id) ON DELETE CASCADE,
  position    integer NOT NULL,
  status      integer NOT NULL,
  headers     jsonb   NOT NULL DEFAULT '{}'::jsonb,
  -- The first 64 KiB; a longer body is compared by its size and SHA-256.
  body        bytea   NOT NULL,
  body_size   integer NOT NULL,
  body_sha256 text    NOT NULL,
  -- The run it was accepted from (null when imported from a suite file).
  run_id      bigint,
  PRIMARY KEY (suite_id, position)
);

-- The 20 latest runs of each suite are kept.
CREATE TABLE suite_runs (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  suite_id        bigint      NOT NULL REFERENCES suites (id) ON DELETE CASCADE,
  target_url      text        NOT NULL,
  status          text        NOT NULL CHECK (status IN ('running', 'done', 'cancelled', 'interrupted')),
  requested_by    text        NOT NULL,
  concurrency     integer     NOT NULL,
  total           integer     NOT NULL,
  -- Whether this run's answers became the suite's expectation (every case then sent twice).
  accepted        boolean     NOT NULL DEFAULT false,
  pass            integer     NOT NULL DEFAULT 0,
  changed         integer     NOT NULL DEFAULT 0,
  failed          integer     NOT NULL DEFAULT 0,
  new             integer     NOT NULL DEFAULT 0,
  learned_ignores jsonb       NOT NULL DEFAULT '[]'::jsonb,
  warning         text,
  started_at      timestamptz NOT NULL DEFAULT now(),
  duration_ms     integer
);
CREATE INDEX suite_runs_suite_idx ON suite_runs (suite_id, id DESC);

-- What each case of a run got, and how it compared.
CREATE TABLE suite_case_results (
  run_id           bigint  NOT NULL REFERENCES suite_runs (id) ON DELETE CASCADE,
  position         integer NOT NULL,
  -- The case's event, as it was when the run was made (a suite's cases may be replaced later).
  provider         text    NOT NULL,
  event_type       text,
  verdict          text    NOT NULL CHECK (verdict IN ('new', 'pass', 'changed', 'failed')),
  resigned         boolean NOT NULL,
  status           integer,
  expected_status  integer,
  response_ms      integer,
  response_headers jsonb,
  -- The first 64 KiB of the answer, its full size and SHA-256.
  body             bytea,
  body_size        integer,
  body_sha256      text,
  diff             jsonb   NOT NULL DEFAULT '[]'::jsonb,
  diff_truncated   boolean NOT NULL DEFAULT false,
  -- Why a case failed, or a note on how it was compared (a body over 64 KiB, …).
  reason           text,
  warning          text,
  PRIMARY KEY (run_id, position)
);
