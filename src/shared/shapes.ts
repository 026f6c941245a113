import { z } from 'zod';

/**
 * Wire shapes of DESIGN §16 (shapes of event types, drift, the provider's published schema),
 * shared by the UI API, MCP, the CLI and the renderer.
 */

export const DRIFT_CHANGES = ['added', 'missing', 'type_changed'] as const;

/** A path's change: `was` the types seen before, `now` the type in this event. Lean: it is in MCP's get_webhook_event. */
export const DriftMarkSchema = z.object({
  path: z.string(),
  change: z.enum(DRIFT_CHANGES),
  was: z.string().optional(),
  now: z.string().optional(),
});
export type DriftMark = z.infer<typeof DriftMarkSchema>;

/** `path` is a JSONPath. */
export const SpecViolationSchema = z.object({
  path: z.string(),
  message: z.string(),
});
export type SpecViolation = z.infer<typeof SpecViolationSchema>;

/** At most this many spec violations are kept per event. */
export const MAX_SPEC_VIOLATIONS = 20;

export const ShapeFieldSchema = z.object({
  path: z.string(),
  types: z.array(z.string()).describe('JSON types seen, most frequent first'),
  presence: z.number().describe('share of events with it, 0–1'),
  required: z.boolean().describe('every object holding it had it'),
  first_seen: z.string(),
  last_seen: z.string(),
  example: z.string().optional().describe('≤ 80 chars; secret-like names masked'),
});
export type ShapeField = z.infer<typeof ShapeFieldSchema>;

export const DriftEventSchema = z.object({
  event_id: z.number().int().positive(),
  received_at: z.string(),
  changes: z.array(DriftMarkSchema),
});
export type DriftEvent = z.infer<typeof DriftEventSchema>;

export const ShapeSummarySchema = z.object({
  provider: z.string(),
  event_type: z.string(),
  events_seen: z.number().int().nonnegative().describe('JSON events in the shape'),
  field_count: z.number().int().nonnegative(),
  first_seen: z.string().nullable(),
  last_seen: z.string().nullable(),
  paths_truncated: z.boolean().describe('the 2,000-path bound was reached: later new paths are not tracked'),
  skipped_not_json: z.number().int().nonnegative().describe('events of the type that were not JSON'),
  skipped_too_large: z.number().int().nonnegative().describe('events too large to walk (> 1 MiB)'),
  drift_events: z.number().int().nonnegative().describe('events marked with drift'),
  last_drift_at: z.string().nullable(),
});
export type ShapeSummary = z.infer<typeof ShapeSummarySchema>;

export const GeneratedTypesSchema = z.object({
  root: z.string().describe('the root type, e.g. GithubPush'),
  typescript: z.string(),
  zod: z.string().describe('exports <root>Schema; imports only zod'),
  json_schema: z.record(z.string(), z.unknown()),
});
export type GeneratedTypes = z.infer<typeof GeneratedTypesSchema>;

export const EventTypeShapeSchema = ShapeSummarySchema.extend({
  fields: z.array(ShapeFieldSchema),
  fields_truncated: z.boolean().describe('more fields than this answer lists'),
  drift: z.array(DriftEventSchema).describe('latest drifted events, newest first'),
  spec_violations: z
    .object({ event_id: z.number().int().positive(), violations: z.array(SpecViolationSchema) })
    .nullable()
    .describe("the latest event breaking the provider's published schema (GitHub)"),
  types: GeneratedTypesSchema,
});
export type EventTypeShape = z.infer<typeof EventTypeShapeSchema>;

/** `github` + `checkout.session.completed` → `GithubCheckoutSessionCompleted` (DESIGN §16). */
export function pascalName(...parts: string[]): string {
  const name = parts
    .flatMap((part) => part.split(/[^A-Za-z0-9]+/))
    .filter((word) => word !== '')
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('');
  if (name === '') return 'Event';
  return /^[0-9]/.test(name) ? `T${name}` : name;
}
