import type { ChaosProfile, IdempotencyVerdict } from '../../shared/delivery-lab.js';
import type { Answer, CaseChaos, Difference, RUN_STATUSES, Verdict } from '../../shared/suites.js';
import type { EventRecord } from './types.js';

/**
 * The records of suites (DESIGN §14) as the store reads and writes them. Imports nothing of the
 * store but its row types, so the suite service, the runner and the suite file can name them.
 */

/** A case as it is saved: an event's fields, copied. */
export interface NewSuiteCase extends Omit<EventRecord, 'id' | 'payload_size' | 'attempts' | 'drift'> {
  source_event_id: number | null;
  /** The provider's kind when the case was made, if known. */
  kind: string | null;
}

export interface SuiteCaseRecord extends NewSuiteCase {
  position: number;
  payload_size: number;
  expectation: Answer | null;
}

export interface SuiteRecord {
  id: number;
  name: string;
  ignore: string[];
  compare_headers: string[];
  created_at: string;
  updated_at: string;
  cases: number;
  expectations: number;
}

export type RunStatus = (typeof RUN_STATUSES)[number];

export interface SuiteRunRecord {
  id: number;
  suite_id: number;
  suite: string;
  target_url: string;
  status: RunStatus;
  requested_by: string;
  concurrency: number;
  total: number;
  accepted: boolean;
  pass: number;
  changed: number;
  failed: number;
  new: number;
  learned_ignores: string[];
  warning: string | null;
  /** The chaos profile as used, seed included (migrations/0011_suite_chaos.sql). */
  chaos: ChaosProfile | null;
  started_at: string;
  duration_ms: number | null;
}

/** One case of a run, as stored. */
export interface CaseResultRecord {
  position: number;
  provider: string;
  event_type: string | null;
  verdict: Verdict;
  resigned: boolean;
  /** What came back (null when nothing did). */
  answer: Answer | null;
  expected_status: number | null;
  response_ms: number | null;
  diff: Difference[];
  diff_truncated: boolean;
  reason: string | null;
  warning: string | null;
  /** With chaos duplicates (idempotencyVerdict). */
  idempotency: IdempotencyVerdict | null;
  /** What the run's chaos profile did to the case; null without one. */
  chaos: CaseChaos | null;
}

/** A case's summary for lists (no payload). */
export interface SuiteCaseSummary {
  position: number;
  source_event_id: number | null;
  provider: string;
  event_type: string | null;
  external_id: string | null;
  trust_mode: EventRecord['trust_mode'];
  origin: EventRecord['origin'];
  payload_size: number;
  received_at: string;
  expected_status: number | null;
}
