import { createHash } from 'node:crypto';
import type { DriftMark, EventTypeShape, GeneratedTypes, ShapeField, ShapeSummary, SpecViolation } from '../../shared/shapes.js';
import { SwitchboardError } from '../errors.js';
import type { EventStore } from '../store/event-store.js';
import type { ShapeSummaryRecord } from '../store/shapes.js';
import { EVENTS_SEEN_MARK, generateFromSchema, rootTypeName, shapeToJsonSchema } from './generate.js';
import { shapeFromJson, typesOf, type FieldStats, type Shape } from './infer.js';
import type { ShapeTracker } from './tracker.js';

/**
 * What the faces ask of shapes (DESIGN §16): the list of types, one type described (fields,
 * drift history, spec violations, generated types), a reset. Reads are foreground statements
 * of one row or one index range each, never a scan of the events; generated types are cached
 * by what they are made of — the type's JSON Schema, not its counts (json-schema-to-typescript
 * and prettier take ~20 ms warm, ~250 ms the first time in a process), so a type whose events
 * keep coming in the same shape is generated once.
 */

export const MAX_DESCRIBED_FIELDS = 2_000;
const DRIFT_HISTORY = 20;
const CACHED_TYPES = 64;

export class ShapeService {
  private readonly typesCache = new Map<string, Promise<GeneratedTypes>>();

  constructor(
    private readonly store: EventStore,
    readonly tracker: ShapeTracker,
  ) {}

  async list(provider?: string): Promise<ShapeSummary[]> {
    return (await this.store.shapes.list(provider)).map(toSummary);
  }

  /** A type's shape; `maxFields` bounds the list (then `fields_truncated`). not_found when the type has no shape yet. */
  async describe(provider: string, eventType: string, options: { maxFields?: number } = {}): Promise<EventTypeShape> {
    const [record, drift, violations] = await Promise.all([
      this.store.shapes.get(provider, eventType),
      this.store.shapes.driftHistory(provider, eventType, DRIFT_HISTORY),
      this.store.shapes.latestViolations(provider, eventType),
    ]);
    if (!record) {
      const known = await this.store.shapes.list(provider);
      const names = known.slice(0, 30).map((row) => row.event_type);
      throw new SwitchboardError(
        'not_found',
        `no shape for ${provider} ${eventType} yet${names.length > 0 ? ` — ${provider} has shapes for: ${names.join(', ')}` : ''} (shapes are inferred from stored JSON events, a moment after they arrive)`,
      );
    }
    const shape = shapeFromJson({ ...record, fields: record.fields as FieldStats[] });
    const fields = describeFields(shape);
    const max = Math.min(options.maxFields ?? MAX_DESCRIBED_FIELDS, MAX_DESCRIBED_FIELDS);
    return {
      ...toSummary(record),
      fields: fields.slice(0, max),
      fields_truncated: fields.length > max,
      drift: drift.map((row) => ({ event_id: row.event_id, received_at: row.received_at, changes: row.drift as DriftMark[] })),
      spec_violations: violations ? { event_id: violations.event_id, violations: violations.spec_violations as SpecViolation[] } : null,
      types: await this.types(record, shape),
    };
  }

  reset(provider: string, eventType?: string): Promise<number> {
    this.typesCache.clear();
    return this.store.shapes.reset(provider, eventType);
  }

  private async types(record: ShapeSummaryRecord, shape: Shape): Promise<GeneratedTypes> {
    const schema = shapeToJsonSchema(shape, rootTypeName(record.provider, record.event_type));
    // A digest, not the schema's text: 64 of 2,000 fields each would hold megabytes of keys.
    const key = `${record.provider}\u0000${record.event_type}\u0000${createHash('sha256').update(JSON.stringify(schema)).digest('base64')}`;
    let cached = this.typesCache.get(key);
    if (cached) {
      // Most recently used last: the one dropped when full is the least recently asked for.
      this.typesCache.delete(key);
    } else {
      if (this.typesCache.size >= CACHED_TYPES) this.typesCache.delete(this.typesCache.keys().next().value!);
      cached = generateFromSchema(schema, record.provider, record.event_type);
      cached.catch(() => this.typesCache.delete(key));
    }
    this.typesCache.set(key, cached);
    const generated = await cached;
    return { ...generated, typescript: generated.typescript.replace(EVENTS_SEEN_MARK, String(record.events_seen)) };
  }
}

function toSummary(record: ShapeSummaryRecord): ShapeSummary {
  return {
    provider: record.provider,
    event_type: record.event_type,
    events_seen: record.events_seen,
    field_count: record.field_count,
    first_seen: record.first_seen,
    last_seen: record.last_seen,
    paths_truncated: record.truncated,
    skipped_not_json: record.skipped_not_json,
    skipped_too_large: record.skipped_too_large,
    drift_events: record.drift_events,
    last_drift_at: record.last_drift_at,
  };
}

/** Every field but the root, in path order (a parent before its members). */
export function describeFields(shape: Shape): ShapeField[] {
  const fields: ShapeField[] = [];
  for (const field of shape.fields.values()) {
    if (field.parent === null) continue;
    const parent = shape.fields.get(field.parent);
    const required = field.key === null ? true : parent !== undefined && field.occurrences >= parent.objects;
    fields.push({
      path: field.path,
      types: typesOf(field),
      presence: shape.events_seen > 0 ? Math.round((field.events / shape.events_seen) * 10_000) / 10_000 : 0,
      required,
      first_seen: field.first_seen,
      last_seen: field.last_seen,
      ...(field.example !== undefined ? { example: field.example } : {}),
    });
  }
  return fields.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
