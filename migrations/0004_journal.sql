-- 0.3: deliveries are acknowledged from a journal file and applied in batches (src/core/journal).
-- How far the journal has been applied; set in the same statement as the rows it applied, so a
-- crash between the two can neither lose nor repeat a row. Unused on PostgreSQL (team mode
-- keeps group commit: several instances allocate ids there).
CREATE TABLE journal_state (
  singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  applied_id bigint  NOT NULL DEFAULT 0
);
INSERT INTO journal_state DEFAULT VALUES;
