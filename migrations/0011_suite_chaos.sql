-- Suite runs under a chaos profile (DESIGN §14 "Order and chaos", §15).
--
-- The run keeps the profile as it was used, its seed included (drawn when none was given), so a
-- run can be repeated decision for decision. Each case keeps what the profile did to it: where
-- it was sent in the run's order, whether that was out of its suite position, the delay before
-- its first send, each duplicate's status — and whether the handler took the duplicates.
ALTER TABLE suite_runs ADD COLUMN chaos jsonb;

ALTER TABLE suite_case_results
  ADD COLUMN idempotency        text CHECK (idempotency IN ('idempotent', 'not_idempotent')),
  ADD COLUMN sent_order         integer,
  ADD COLUMN reordered          boolean,
  ADD COLUMN delay_ms           integer,
  -- Each duplicate's status, in order (null: no answer); null when the run had no chaos profile.
  ADD COLUMN duplicate_statuses jsonb;
