import type { Logger } from '../logger.js';
import { BackgroundLoop } from '../store/background-loop.js';
import { SliceSize, type DatabaseLanes } from '../store/foreground.js';
import {
  loadShapes,
  readShapeBatch,
  ShapePositionMoved,
  writeShapeStep,
  type EventShapeNote,
  type ShapeInput,
  type ShapeRecord,
} from '../store/shapes.js';
import type { SpecViolation } from '../../shared/shapes.js';
import { emptyShape, fieldsToJson, observe, shapeFromJson, type Shape } from './infer.js';

/**
 * Keeps the shape of every (provider, event_type) (DESIGN §16) off the write path, like the
 * search index: it reads the events past shape_state.shaped_id in small batches, walks their
 * JSON payloads, and writes the changed shapes, each event's drift and spec violations and its
 * new position in one transaction. Every database statement goes through `lanes.background`
 * (DESIGN §17): one slice at a time, ≤ ~4 ms of database time (SliceSize), only when no read,
 * applier batch or replay is in flight — a read waits for at most the slice in progress.
 *
 * The walking itself is JavaScript on this thread: bounded per event (payloads over
 * MAX_WALK_BYTES are counted as skipped, not parsed; paths ≤ 2,000; depth ≤ 16) and the loop
 * yields to the event loop between events, so a burst of large payloads never stalls a
 * delivery's answer. While deliveries keep arriving the tracker waits, as the indexer does
 * (background-loop.ts).
 */

/** Payloads larger than this are not walked (counted in skipped_too_large). */
export const MAX_WALK_BYTES = 1024 * 1024;
const MAX_BATCH_ROWS = 200;
const POLL_MS = 2_000;
/** Far behind, it no longer waits for ingest to pause (its slices still wait for reads). */
const MAX_BEHIND = 50_000;
/** JavaScript time per turn of the event loop before the walk yields (a request read meanwhile waits at most this). */
const WALK_TURN_MS = 3;
/** How often a tracker that yields to another job looks again. */
const YIELD_MS = 1_000;

export interface ShapeTrackerOptions {
  logger: Logger;
  /** The provider's kind (`github` gets its published schema checked), if configured. */
  kindOf: (provider: string) => string | undefined;
  /** Where a GitHub payload breaks GitHub's published schema (github-schema.ts); null: not published. */
  checkGithub?: (eventType: string, payload: string) => Promise<SpecViolation[] | null>;
  ingestBacklog?: () => number;
  /** Resolves once every event acknowledged before the call is stored (the journal's barrier). */
  barrier?: () => Promise<void>;
  newestId?: () => number;
  lastIngestAt?: () => number;
  /**
   * True while another background job should have the lane first (the search index's backfill:
   * a search walks what it has not reached, while shapes behind only delay drift marks).
   */
  yieldTo?: () => boolean;
}

interface Held {
  shape: Shape;
  record: Omit<ShapeRecord, 'fields' | 'events_seen' | 'first_seen' | 'last_seen' | 'truncated' | 'field_count'>;
}

const keyOf = (provider: string, eventType: string) => `${provider}\u0000${eventType}`;

export class ShapeTracker {
  private readonly loop: BackgroundLoop;
  private shapedId = 0;
  private generation = -1;
  private stepping: Promise<unknown> = Promise.resolve();
  /** Shapes of the types seen lately, as in the database after the last step. */
  private held = new Map<string, Held>();
  private readonly size = new SliceSize({ initialRows: 20, maxRows: MAX_BATCH_ROWS });

  constructor(
    private readonly lanes: DatabaseLanes,
    private readonly options: ShapeTrackerOptions,
  ) {
    this.loop = new BackgroundLoop({
      logger: options.logger,
      ...(options.ingestBacklog ? { ingestBacklog: options.ingestBacklog } : {}),
      ...(options.lastIngestAt ? { lastIngestAt: options.lastIngestAt } : {}),
      behind: () => (this.options.newestId?.() ?? 0) - this.shapedId,
      maxBehind: MAX_BEHIND,
      pollMs: POLL_MS,
      // Far behind, it stops waiting for ingest to pause, but never cuts in front of a read: being
      // behind only delays drift marks (a search, by contrast, walks an unindexed tail itself).
      step: async () => (this.options.yieldTo?.() ? { done: false, idleMs: YIELD_MS } : this.serial(undefined, false)),
      failed: (error) => `shapes: ${error.message}; trying again`,
    });
  }

  start(): void {
    this.loop.start();
  }

  /** New events are stored: shape them when there is time. */
  wake(): void {
    this.loop.wake();
  }

  /** How far the shapes reach (tests, the benchmark). */
  get shapedThrough(): number {
    return this.shapedId;
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Shapes every stored event (tests and the benchmark; the loop does this by itself). */
  async catchUp(): Promise<void> {
    await this.options.barrier?.(); // every event acknowledged so far is in the database
    while (!(await this.serial(MAX_BATCH_ROWS, true)).done) {
      // next step
    }
  }

  /** Steps one at a time (the loop's and catchUp's): two at once would walk the same batch twice. */
  private serial(rows: number | undefined, urgent: boolean): Promise<{ done: boolean }> {
    const next = this.stepping.catch(() => {}).then(() => this.step(rows, urgent));
    this.stepping = next;
    return next;
  }

  /** One step: a batch read, the shapes it needs loaded, walked, written — each statement a background slice. */
  private async step(rows: number | undefined, urgent: boolean): Promise<{ done: boolean }> {
    const take = rows ?? this.size.rows;
    let readMs = 0;
    const batch = await this.lanes.background(
      async (db) => {
        const started = performance.now();
        const read = await readShapeBatch(db, take, MAX_WALK_BYTES);
        readMs = performance.now() - started;
        return read;
      },
      { urgent, label: 'shapes: read' },
    );
    if (batch.generation !== this.generation) {
      this.held.clear(); // a reset or a clear: shapes start again from the database
      this.generation = batch.generation;
    }
    this.shapedId = batch.shapedId;
    if (batch.events.length === 0) return { done: true };

    const typed = batch.events.filter((event) => event.event_type !== null && event.event_type !== '');
    const missing = [...new Map(typed.map((event) => [keyOf(event.provider, event.event_type), event])).values()]
      .filter((event) => !this.held.has(keyOf(event.provider, event.event_type)))
      .map((event) => ({ provider: event.provider, event_type: event.event_type }));
    if (missing.length > 0) {
      const loaded = await this.lanes.background((db) => loadShapes(db, missing), { urgent, label: 'shapes: load' });
      for (const record of loaded) {
        const { fields, events_seen, first_seen, last_seen, truncated, field_count: _count, ...rest } = record;
        this.held.set(keyOf(record.provider, record.event_type), {
          shape: shapeFromJson({ events_seen, first_seen, last_seen, truncated, fields: fields as never }),
          record: rest,
        });
      }
    }

    // Walk on copies: if the write below fails, the held shapes stay as the database has them.
    const working = new Map<string, Held>();
    const notes: EventShapeNote[] = [];
    let turn = performance.now();
    for (const event of typed) {
      const key = keyOf(event.provider, event.event_type);
      let held = working.get(key);
      if (!held) {
        const before = this.held.get(key);
        held = before
          ? { shape: cloneShape(before.shape), record: { ...before.record } }
          : {
              shape: emptyShape(),
              record: { provider: event.provider, event_type: event.event_type, skipped_not_json: 0, skipped_too_large: 0, drift_events: 0, last_drift_at: null },
            };
        working.set(key, held);
      }
      const note = await this.walk(event, held);
      if (note) notes.push(note);
      if (performance.now() - turn > WALK_TURN_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        turn = performance.now();
      }
    }

    const last = batch.events[batch.events.length - 1]!.id;
    const shapes: ShapeRecord[] = [...working.values()].map(({ shape, record }) => ({
      ...record,
      events_seen: shape.events_seen,
      first_seen: shape.first_seen,
      last_seen: shape.last_seen,
      truncated: shape.truncated,
      fields: fieldsToJson(shape),
      field_count: shape.fields.size,
    }));
    try {
      await this.lanes.background(
        async (db) => {
          const started = performance.now();
          await writeShapeStep(db, { fromId: batch.shapedId, toId: last, generation: batch.generation, shapes, notes });
          // Sized by the dearer of its two slices: the write grows with the notes and shapes of the batch.
          this.size.record(batch.events.length, Math.max(readMs, performance.now() - started));
        },
        { urgent, label: 'shapes: write' },
      );
    } catch (error) {
      this.held.clear();
      if (error instanceof ShapePositionMoved) return { done: false };
      throw error;
    }
    for (const [key, held] of working) this.held.set(key, held);
    this.shapedId = last;
    return { done: batch.events.length < take };
  }

  /** One event into its type's shape; its note when it drifts or breaks the published schema. */
  private async walk(event: ShapeInput, held: Held): Promise<EventShapeNote | null> {
    if (event.payload === null) {
      held.record.skipped_too_large++;
      return null;
    }
    const text = Buffer.from(event.payload.buffer, event.payload.byteOffset, event.payload.byteLength).toString('utf8');
    let payload: unknown;
    try {
      if (!/^\s*[[{]/.test(text.slice(0, 64)) && !(event.content_type ?? '').includes('json')) throw new Error('not JSON');
      payload = JSON.parse(text);
    } catch {
      held.record.skipped_not_json++;
      return null;
    }
    const drift = observe(held.shape, payload, event.received_at);
    let violations: SpecViolation[] | null = null;
    if (this.options.checkGithub && this.options.kindOf(event.provider) === 'github') {
      violations = await this.options.checkGithub(event.event_type, text).catch(() => null);
    }
    if (drift.length > 0) {
      held.record.drift_events++;
      held.record.last_drift_at = event.received_at;
    }
    if (drift.length === 0 && (violations === null || violations.length === 0)) return null;
    return {
      event_id: event.id,
      provider: event.provider,
      event_type: event.event_type,
      received_at: event.received_at,
      drift: drift.length > 0 ? drift.slice(0, 50) : null,
      spec_violations: violations && violations.length > 0 ? violations : null,
    };
  }

}

function cloneShape(shape: Shape): Shape {
  const fields = new Map<string, (typeof shape.fields extends Map<string, infer F> ? F : never)>();
  for (const [path, field] of shape.fields) fields.set(path, { ...field, types: { ...field.types } });
  return { ...shape, fields };
}
