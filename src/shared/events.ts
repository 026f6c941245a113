import { z } from 'zod';
import { CHAOS_MARKS } from './delivery-lab.js';
import { DriftMarkSchema, SpecViolationSchema } from './shapes.js';

/**
 * Wire shapes of the event log, shared by MCP, the control API and the renderer. snake_case
 * because they are user-facing (DESIGN §3). Timestamps are ISO-8601 UTC with microseconds, the
 * exact stored value, so a cursor built from one neither skips nor repeats rows.
 */

export const FAMILIES = ['webhook', 'queue'] as const;
export const TRUST_MODES = ['signed', 'token', 'open', 'queue'] as const;
export const FamilySchema = z.enum(FAMILIES);
/** Where an event came from: a real delivery, a test event made here, or an import. */
export const ORIGINS = ['provider', 'test', 'import'] as const;
export const OriginSchema = z.enum(ORIGINS);
export type Origin = z.infer<typeof OriginSchema>;
export const TrustModeSchema = z.enum(TRUST_MODES);
export type Family = z.infer<typeof FamilySchema>;
export type TrustMode = z.infer<typeof TrustModeSchema>;

export const EventSummarySchema = z.object({
  id: z.number().int().positive().describe('event id'),
  provider: z.string().describe('provider name from config.json'),
  family: FamilySchema,
  event_type: z.string().nullable().describe('e.g. "push", "checkout.session.completed"'),
  external_id: z.string().nullable().describe('the provider delivery id (dedupe key)'),
  origin: OriginSchema.describe('provider: a real delivery; test: a test event made by switchboard; import: imported'),
  trust_mode: TrustModeSchema.describe('how the sender was authenticated'),
  verified: z.boolean().describe('true only when a provider signature over the raw body was checked'),
  payload_size: z.number().int().nonnegative().describe('payload size in bytes'),
  received_at: z.string().describe('ISO-8601 UTC time, microsecond precision'),
  // Deliveries of this (provider, external_id): 1 + redeliveries (DESIGN §15). Plain numbers, no describe: MCP's tools/list budget.
  attempts: z.number(),
  // Lean: EventSummary is in several MCP output schemas (DESIGN §6's tools/list budget).
  drift: z.boolean(),
});
export type EventSummary = z.infer<typeof EventSummarySchema>;

export const PAYLOAD_ENCODINGS = ['utf8', 'base64'] as const;

/** One delivery of an event by its provider (DESIGN §15): when, what it was answered, and why. */
export const AttemptSchema = z.object({
  attempt: z.number(),
  at: z.string(),
  status: z.number(),
  // The answer rule's number (1 = first); null: the normal answer.
  rule: z.number().nullable(),
  delay_ms: z.number(),
});
export type Attempt = z.infer<typeof AttemptSchema>;

export const EventDetailSchema = EventSummarySchema.extend({
  verify_detail: z.string().nullable(),
  content_type: z.string().nullable(),
  source_ip: z.string().nullable(),
  headers: z.record(z.string(), z.string()).describe('request headers; secret-bearing values are «redacted»'),
  payload: z.string().describe('the raw body: text when it is valid UTF-8, else base64'),
  payload_encoding: z.enum(PAYLOAD_ENCODINGS),
  // The newest 50 attempts, oldest first.
  attempt_log: z.array(AttemptSchema),
  drift: z.array(DriftMarkSchema).describe("vs its type's shape"),
  spec_violations: z.array(SpecViolationSchema).optional().describe("breaks of GitHub's schema"),
});
export type EventDetail = z.infer<typeof EventDetailSchema>;

export const RejectionSchema = z.object({
  id: z.number().int().positive(),
  provider: z.string(),
  reason: z.string().describe('stable reason code, e.g. signature_mismatch'),
  hint: z.string().nullable().describe('the likely cause, in words'),
  headers: z.record(z.string(), z.string()),
  headers_truncated: z.boolean().describe('headers were cut to the stored cap'),
  body_size: z.number().int().nonnegative(),
  body_sha256: z.string(),
  source_ip: z.string().nullable(),
  received_at: z.string(),
});
export type Rejection = z.infer<typeof RejectionSchema>;

/** Who asked for a replay: the UI, the HTTP API, an MCP agent, a forward rule, or the CLI. */
export const REQUESTED_BY = ['ui', 'api', 'mcp', 'forward', 'cli'] as const;

export const ReplaySchema = z.object({
  id: z.number().int().positive(),
  event_id: z.number().int().positive(),
  target_url: z.string(),
  resigned: z.boolean(),
  delivered: z.boolean(),
  response_status: z.number().int().nullable(),
  response_ms: z.number().int().nullable(),
  response_headers: z.record(z.string(), z.string()).nullable(),
  response_body: z.string().nullable().describe('first 64 KiB of the response body'),
  response_body_encoding: z.enum(PAYLOAD_ENCODINGS).nullable(),
  error: z.string().nullable(),
  requested_by: z.enum(REQUESTED_BY),
  payload_edited: z.boolean().describe('the payload sent was an edited one, not the stored bytes'),
  headers_overridden: z.array(z.string()).describe('names of headers the caller set or overrode'),
  request_headers: z.record(z.string(), z.string()).nullable().describe('headers sent (secret-bearing values «redacted»)'),
  warning: z.string().nullable().describe('e.g. re-signing was asked for but was impossible'),
  chaos: z.enum(CHAOS_MARKS).nullable().describe('a copy sent by a chaos profile: duplicate, delayed or reordered (DESIGN §15)'),
  created_at: z.string(),
});
export type Replay = z.infer<typeof ReplaySchema>;

/** A replay or forward failed when the target did not answer or answered other than 2xx. */
export function replayFailed(replay: Pick<Replay, 'delivered' | 'response_status'>): boolean {
  return !replay.delivered || replay.response_status === null || replay.response_status < 200 || replay.response_status > 299;
}

export const REDACTED = '«redacted»';

/** A replay keeps at most this much of the handler's response body (DESIGN §7). */
export const MAX_RESPONSE_BODY_BYTES = 64 * 1024;
