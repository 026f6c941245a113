import { iso } from './columns.js';
import type { StoreContext } from './context.js';
import type { SqlClient } from './sql-client.js';

/**
 * The statements of shapes (DESIGN §16, migrations/0010): the tracker's (src/core/shapes/tracker.ts)
 * run on the background lane, in slices — read the next events, load the shapes they need, write
 * what they changed with the tracker's position in one transaction — and the faces' reads
 * (a type's shape, the list of types, drift history, an event's notes) on the foreground lane.
 */

/** A shape row as the store keeps it; `fields` is the tracker's list (src/core/shapes/infer.ts FieldStats). */
export interface ShapeRecord {
  provider: string;
  event_type: string;
  events_seen: number;
  first_seen: string | null;
  last_seen: string | null;
  truncated: boolean;
  fields: unknown[];
  field_count: number;
  skipped_not_json: number;
  skipped_too_large: number;
  drift_events: number;
  last_drift_at: string | null;
}

export type ShapeSummaryRecord = Omit<ShapeRecord, 'fields'>;

/** An event as the tracker reads it: the payload only when it is small enough to walk. */
export interface ShapeInput {
  id: number;
  provider: string;
  event_type: string;
  received_at: string;
  content_type: string | null;
  payload_size: number;
  payload: Uint8Array | null;
}

/** What the tracker says about one event (only events with something to say). */
export interface EventShapeNote {
  event_id: number;
  provider: string;
  event_type: string;
  received_at: string;
  drift: unknown[] | null;
  spec_violations: unknown[] | null;
}

export interface ShapeBatch {
  shapedId: number;
  generation: number;
  events: ShapeInput[];
}

/** Another instance (PostgreSQL, team mode) or a reset moved the position first: start again from the database. */
export class ShapePositionMoved extends Error {}

const SUMMARY = `shapes.provider, shapes.event_type, shapes.events_seen, ${iso('shapes.first_seen')} AS first_seen, ${iso('shapes.last_seen')} AS last_seen,
  shapes.truncated, shapes.field_count, shapes.skipped_not_json, shapes.skipped_too_large, shapes.drift_events, ${iso('shapes.last_drift_at')} AS last_drift_at`;

type Numeric = number | string;
type SummaryRow = Omit<ShapeSummaryRecord, 'events_seen' | 'field_count' | 'skipped_not_json' | 'skipped_too_large' | 'drift_events'> & {
  events_seen: Numeric;
  field_count: Numeric;
  skipped_not_json: Numeric;
  skipped_too_large: Numeric;
  drift_events: Numeric;
};

const toSummary = (row: SummaryRow): ShapeSummaryRecord => ({
  ...row,
  events_seen: Number(row.events_seen),
  field_count: Number(row.field_count),
  skipped_not_json: Number(row.skipped_not_json),
  skipped_too_large: Number(row.skipped_too_large),
  drift_events: Number(row.drift_events),
});

const asJson = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value);

// ---------------------------------------------------------------------------------------------
// The tracker's slices (background lane)

/** The next `limit` events past the tracker's position, with payloads of at most `maxPayloadBytes`. */
export async function readShapeBatch(db: SqlClient, limit: number, maxPayloadBytes: number): Promise<ShapeBatch> {
  const state = await db.query<{ shaped_id: Numeric; generation: Numeric }>('SELECT shaped_id, generation FROM shape_state');
  const shapedId = Number(state[0]?.shaped_id ?? 0);
  const rows = await db.query<Omit<ShapeInput, 'id' | 'payload_size'> & { id: Numeric; payload_size: Numeric }>(
    `SELECT events.id, events.provider, events.event_type, ${iso('events.received_at')} AS received_at, events.content_type, events.payload_size,
            CASE WHEN events.payload_size <= $3 THEN events.payload END AS payload
     FROM events WHERE events.id > $1 ORDER BY events.id LIMIT $2`,
    [shapedId, limit, maxPayloadBytes],
  );
  return {
    shapedId,
    generation: Number(state[0]?.generation ?? 0),
    events: rows.map((row) => ({ ...row, id: Number(row.id), payload_size: Number(row.payload_size), payload: row.payload ?? null })),
  };
}

/** The stored shapes of these types (absent when there is none yet). */
export async function loadShapes(db: SqlClient, keys: readonly { provider: string; event_type: string }[]): Promise<ShapeRecord[]> {
  if (keys.length === 0) return [];
  const rows = await db.query<SummaryRow & { fields: unknown }>(
    `SELECT ${SUMMARY}, shapes.fields FROM shapes
     WHERE (shapes.provider, shapes.event_type) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
    [keys.map((key) => key.provider), keys.map((key) => key.event_type)],
  );
  return rows.map((row) => ({ ...toSummary(row), fields: asJson(row.fields) as unknown[] }));
}

/**
 * One step's result, atomically: the changed shapes, the notes, and the position moved from
 * `fromId` to `toId` — only if nobody moved it meanwhile (ShapePositionMoved otherwise, and
 * nothing written).
 */
export async function writeShapeStep(
  db: SqlClient,
  step: { fromId: number; toId: number; generation: number; shapes: readonly ShapeRecord[]; notes: readonly EventShapeNote[] },
): Promise<void> {
  await db.transaction(async (tx) => {
    const moved = await tx.query(
      'UPDATE shape_state SET shaped_id = $2 WHERE shaped_id = $1 AND generation = $3 RETURNING shaped_id',
      [step.fromId, step.toId, step.generation],
    );
    if (moved.length === 0) throw new ShapePositionMoved('the shape position moved');
    if (step.shapes.length > 0) {
      await tx.query(
        `INSERT INTO shapes (provider, event_type, events_seen, first_seen, last_seen, truncated, fields, field_count,
                             skipped_not_json, skipped_too_large, drift_events, last_drift_at, updated_at)
         SELECT x.provider, x.event_type, x.events_seen, x.first_seen, x.last_seen, x.truncated, x.fields, x.field_count,
                x.skipped_not_json, x.skipped_too_large, x.drift_events, x.last_drift_at, now()
         FROM jsonb_to_recordset($1::jsonb) AS x(provider text, event_type text, events_seen bigint, first_seen timestamptz, last_seen timestamptz,
              truncated boolean, fields jsonb, field_count integer, skipped_not_json bigint, skipped_too_large bigint, drift_events bigint, last_drift_at timestamptz)
         ON CONFLICT (provider, event_type) DO UPDATE SET
           events_seen = excluded.events_seen, first_seen = excluded.first_seen, last_seen = excluded.last_seen, truncated = excluded.truncated,
           fields = excluded.fields, field_count = excluded.field_count, skipped_not_json = excluded.skipped_not_json,
           skipped_too_large = excluded.skipped_too_large, drift_events = excluded.drift_events, last_drift_at = excluded.last_drift_at, updated_at = now()`,
        [JSON.stringify(step.shapes)],
      );
    }
    if (step.notes.length > 0) {
      // An event deleted meanwhile (retention, clear) gets no note: the join leaves it out.
      await tx.query(
        `INSERT INTO event_shapes (event_id, provider, event_type, received_at, drift, spec_violations)
         SELECT x.event_id, x.provider, x.event_type, x.received_at, x.drift, x.spec_violations
         FROM jsonb_to_recordset($1::jsonb) AS x(event_id bigint, provider text, event_type text, received_at timestamptz, drift jsonb, spec_violations jsonb)
         JOIN events ON events.id = x.event_id
         ON CONFLICT (event_id) DO NOTHING`,
        [JSON.stringify(step.notes)],
      );
    }
  });
}

// ---------------------------------------------------------------------------------------------
// The faces' reads (foreground lane)

export interface DriftHistoryRecord {
  event_id: number;
  received_at: string;
  drift: unknown[];
}

export class Shapes {
  constructor(private readonly ctx: StoreContext) {}

  /** Every type with a shape, by provider then type (one row per type; never counts events). */
  async list(provider?: string): Promise<ShapeSummaryRecord[]> {
    const rows = await this.ctx.db.query<SummaryRow>(
      `SELECT ${SUMMARY} FROM shapes ${provider === undefined ? '' : 'WHERE shapes.provider = $1'} ORDER BY shapes.provider, shapes.event_type LIMIT 5000`,
      provider === undefined ? [] : [provider],
    );
    return rows.map(toSummary);
  }

  async get(provider: string, eventType: string): Promise<ShapeRecord | null> {
    const rows = await loadShapes(this.ctx.db, [{ provider, event_type: eventType }]);
    return rows[0] ?? null;
  }

  /** The type's latest drifted events, newest first (the partial index on drifted events). */
  async driftHistory(provider: string, eventType: string, limit: number): Promise<DriftHistoryRecord[]> {
    const rows = await this.ctx.db.query<{ event_id: Numeric; received_at: string; drift: unknown }>(
      `SELECT event_shapes.event_id, ${iso('event_shapes.received_at')} AS received_at, event_shapes.drift FROM event_shapes
       WHERE event_shapes.provider = $1 AND event_shapes.event_type = $2 AND event_shapes.drift IS NOT NULL
       ORDER BY event_shapes.received_at DESC, event_shapes.event_id DESC LIMIT $3`,
      [provider, eventType, limit],
    );
    return rows.map((row) => ({ event_id: Number(row.event_id), received_at: row.received_at, drift: asJson(row.drift) as unknown[] }));
  }

  /** The type's latest event with spec violations, if any among its recent notes. */
  async latestViolations(provider: string, eventType: string): Promise<{ event_id: number; spec_violations: unknown[] } | null> {
    const rows = await this.ctx.db.query<{ event_id: Numeric; spec_violations: unknown }>(
      `SELECT event_shapes.event_id, event_shapes.spec_violations FROM event_shapes
       WHERE event_shapes.provider = $1 AND event_shapes.event_type = $2 AND event_shapes.spec_violations IS NOT NULL
       ORDER BY event_shapes.event_id DESC LIMIT 1`,
      [provider, eventType],
    );
    const row = rows[0];
    return row ? { event_id: Number(row.event_id), spec_violations: asJson(row.spec_violations) as unknown[] } : null;
  }

  /** What the tracker noted about one event: drift and spec violations (null when nothing). */
  async notes(eventId: number): Promise<{ drift: unknown[] | null; spec_violations: unknown[] | null; shaped: boolean }> {
    const rows = await this.ctx.db.query<{ drift: unknown; spec_violations: unknown; shaped: boolean }>(
      `SELECT n.drift, n.spec_violations, (SELECT shape_state.shaped_id >= $1 FROM shape_state) AS shaped
       FROM (SELECT 1) AS one LEFT JOIN event_shapes AS n ON n.event_id = $1`,
      [eventId],
    );
    const row = rows[0];
    return {
      drift: row?.drift ? (asJson(row.drift) as unknown[]) : null,
      spec_violations: row?.spec_violations ? (asJson(row.spec_violations) as unknown[]) : null,
      shaped: row?.shaped === true,
    };
  }

  /**
   * Forgets the shape of one type, or of every type of a provider: it is inferred again from the
   * next events. The events' drift marks stay (they were drift when they came).
   */
  async reset(provider: string, eventType?: string): Promise<number> {
    return this.ctx.db.transaction(async (tx) => {
      const gone = await tx.query(
        `DELETE FROM shapes WHERE shapes.provider = $1 ${eventType === undefined ? '' : 'AND shapes.event_type = $2'} RETURNING 1`,
        eventType === undefined ? [provider] : [provider, eventType],
      );
      await tx.query('UPDATE shape_state SET generation = generation + 1');
      return gone.length;
    });
  }
}
