import { z } from 'zod';
import { IDEMPOTENCY_VERDICTS } from './delivery-lab.js';
import { OriginSchema, PAYLOAD_ENCODINGS, TrustModeSchema } from './events.js';

/**
 * Wire shapes of suites (DESIGN §14), shared by the UI API, the CLI and the renderer: a suite is
 * a named list of cases (copies of events), a run sends them to a handler and compares each
 * answer with the suite's expectation.
 */

export const SUITE_NAME_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,62}$/;
export const SuiteNameSchema = z.string().regex(SUITE_NAME_PATTERN, 'a suite name: lowercase letters, digits, ".", "-" or "_", at most 63 characters');

/** Cases a filter takes when no limit is given, and at most. */
export const SUITE_DEFAULT_CASES = 50;
export const SUITE_MAX_CASES = 5_000;
export const SUITE_MAX_CONCURRENCY = 32;
/** Differences listed per case, then `diff_truncated`. */
export const MAX_DIFFERENCES = 50;
/** Runs kept per suite. */
export const SUITE_RUNS_KEPT = 20;

/** What a suite keeps of an answer (and of an expectation). */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  /** The first 64 KiB (ANSWER_BODY_BYTES) of the body. */
  body: Uint8Array;
  /** The whole body's size and SHA-256 (hex). */
  size: number;
  sha256: string;
}

export const VERDICTS = ['new', 'pass', 'changed', 'failed'] as const;
export const VerdictSchema = z.enum(VERDICTS);
export type Verdict = z.infer<typeof VerdictSchema>;

export const CHANGES = ['added', 'removed', 'changed'] as const;

/**
 * One difference between the expected and the received answer: a JSONPath into a JSON body,
 * `status`, `headers.<name>`, or `body` (bodies compared as bytes or by SHA-256).
 */
export const DifferenceSchema = z.object({
  path: z.string(),
  change: z.enum(CHANGES),
  before: z.unknown().optional(),
  after: z.unknown().optional(),
});
export type Difference = z.infer<typeof DifferenceSchema>;

export const RUN_STATUSES = ['running', 'done', 'cancelled', 'interrupted'] as const;

export const SuiteRunSchema = z.object({
  id: z.number().int().positive(),
  suite: z.string(),
  target_url: z.string(),
  status: z.enum(RUN_STATUSES).describe('interrupted: switchboard stopped during the run'),
  requested_by: z.string(),
  concurrency: z.number().int().positive().describe('cases in flight at once; 1 sends them one at a time, in suite order'),
  total: z.number().int().nonnegative(),
  done: z.number().int().nonnegative().describe('cases finished so far'),
  accepted: z.boolean().describe('its answers became the expectation (every case was sent twice to learn noise)'),
  pass: z.number().int().nonnegative(),
  changed: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  new: z.number().int().nonnegative(),
  learned_ignores: z.array(z.string()).describe('paths that differed between two sends of a case, added to the ignores'),
  warning: z.string().nullable(),
  chaos: z.string().nullable().describe('the chaos profile it ran with, in the CLI spelling, seed included (DESIGN §15), e.g. "duplicate=1,copies=1,after=100,seed=7"'),
  started_at: z.string(),
  duration_ms: z.number().int().nullable(),
});
export type SuiteRun = z.infer<typeof SuiteRunSchema>;

export const SuiteSummarySchema = z.object({
  name: z.string(),
  cases: z.number().int().nonnegative(),
  expectations: z.number().int().nonnegative().describe('cases with an accepted answer'),
  ignore: z.array(z.string()),
  compare_headers: z.array(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
  last_run: SuiteRunSchema.nullable(),
});
export type SuiteSummary = z.infer<typeof SuiteSummarySchema>;

export const SuiteCaseSchema = z.object({
  case: z.number().int().positive(),
  source_event_id: z.number().int().positive().nullable(),
  provider: z.string(),
  event_type: z.string().nullable(),
  external_id: z.string().nullable(),
  trust_mode: TrustModeSchema,
  origin: OriginSchema,
  payload_size: z.number().int().nonnegative(),
  received_at: z.string(),
  expected_status: z.number().int().nullable(),
});
export type SuiteCase = z.infer<typeof SuiteCaseSchema>;

/** What a run's chaos profile did to one case (DESIGN §15). */
export const CaseChaosSchema = z.object({
  sent_order: z.number().int().positive().describe('its place in the order the run sent the cases (1: first)'),
  reordered: z.boolean().describe('sent out of its suite position'),
  delay_ms: z.number().int().nonnegative().describe('waited before its first send'),
  duplicates: z.array(z.number().int().nullable()).describe("each duplicate's status, in order; null: no answer"),
});
export type CaseChaos = z.infer<typeof CaseChaosSchema>;

/** What chaos did to a case, in words (CLI and UI): `×2 duplicates (200, 409)`, `delayed 120 ms`, `reordered (sent #3)`. */
export function chaosMarks(chaos: CaseChaos | null): string[] {
  if (!chaos) return [];
  const marks: string[] = [];
  if (chaos.duplicates.length > 0) marks.push(`×${chaos.duplicates.length} duplicate${chaos.duplicates.length === 1 ? '' : 's'} (${chaos.duplicates.map((status) => status ?? 'no answer').join(', ')})`);
  if (chaos.delay_ms > 0) marks.push(`delayed ${chaos.delay_ms} ms`);
  if (chaos.reordered) marks.push(`reordered (sent #${chaos.sent_order})`);
  return marks;
}

export const CaseResultSchema = z.object({
  case: z.number().int().positive(),
  provider: z.string(),
  event_type: z.string().nullable(),
  verdict: VerdictSchema,
  status: z.number().int().nullable().describe('what the handler answered; null when nothing came back'),
  expected_status: z.number().int().nullable(),
  ms: z.number().int().nullable(),
  resigned: z.boolean(),
  diff_count: z.number().int().nonnegative(),
  diff: z.array(DifferenceSchema).optional().describe('present when asked for (getSuiteRun diffs or case)'),
  diff_truncated: z.boolean(),
  reason: z.string().nullable().describe('why a case failed, or how it was compared (a body over 64 KiB, …)'),
  warning: z.string().nullable().describe('e.g. sent unsigned: its provider has no secret'),
  idempotency: z.enum(IDEMPOTENCY_VERDICTS).nullable().describe('with chaos duplicates: not_idempotent when the first send got a 2xx and a duplicate did not (the case is then changed)'),
  chaos: CaseChaosSchema.nullable().describe('null: the run had no chaos profile'),
});
export type CaseResult = z.infer<typeof CaseResultSchema>;

/** A body as the UI shows it side by side: text, or base64 when not UTF-8. */
export const BodyViewSchema = z.object({
  text: z.string(),
  encoding: z.enum(PAYLOAD_ENCODINGS),
  size: z.number().int().nonnegative().describe('the whole body, in bytes'),
  truncated: z.boolean().describe('only the first 64 KiB are kept'),
});
export type BodyView = z.infer<typeof BodyViewSchema>;

export const CaseDetailSchema = z.object({
  case: z.number().int().positive(),
  expected: z.object({ status: z.number().int(), headers: z.record(z.string(), z.string()), body: BodyViewSchema }).nullable(),
  got: z.object({ status: z.number().int(), headers: z.record(z.string(), z.string()), body: BodyViewSchema }).nullable(),
});
export type CaseDetail = z.infer<typeof CaseDetailSchema>;
