import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShapeTracker } from '../../../src/core/shapes/tracker.js';
import { EventStore } from '../../../src/core/store/event-store.js';
import { DatabaseLanes } from '../../../src/core/store/foreground.js';
import { migrate } from '../../../src/core/store/migrations.js';
import { openPglite, type SqlClient } from '../../../src/core/store/sql-client.js';
import { migrationsDir } from '../../../src/core/paths.js';
import { memoryLogger } from '../../helpers/core.js';

// The shape tracker is background work (DESIGN §17): every statement it sends goes through
// lanes.background, starts only when no foreground statement is in flight, and a read sent while
// the tracker works waits for at most the one slice in progress — never behind the tracker's queue.

/** Lanes that record, for every background slice, what the foreground was doing. */
class RecordingLanes extends DatabaseLanes {
  sliceStarts: number[] = [];
  slicesRunning = 0;
  slicesStarted = 0;
  override background<T>(work: (db: SqlClient) => Promise<T>, options: { urgent?: boolean; label?: string | (() => string) } = {}): Promise<T> {
    return super.background(async (db) => {
      this.sliceStarts.push(this.foregroundInFlight);
      this.slicesRunning++;
      this.slicesStarted++;
      try {
        return await work(db);
      } finally {
        this.slicesRunning--;
      }
    }, options);
  }
}

describe('the shape tracker and foreground reads', () => {
  let sql: SqlClient;
  let store: EventStore;
  const EVENTS = 600;

  beforeAll(async () => {
    sql = await openPglite('memory://');
    await migrate(sql, migrationsDir());
    store = new EventStore(sql);
    const inserts: Promise<unknown>[] = [];
    for (let i = 0; i < EVENTS; i++) {
      const payload = { id: i, kind: i % 3 === 0 ? 'a' : 'b', nested: { list: [i, `x${i}`], flag: i % 2 === 0 }, extra: i > 550 ? { late: true } : undefined };
      inserts.push(
        store.insertEvent({
          provider: 'hooks',
          family: 'webhook',
          event_type: `type.${i % 4}`,
          external_id: `ext-${i}`,
          trust_mode: 'open',
          verified: false,
          verify_detail: null,
          content_type: 'application/json',
          headers: {},
          payload: new TextEncoder().encode(JSON.stringify(payload)),
          source_ip: null,
        }),
      );
    }
    await Promise.all(inserts);
  }, 120_000);
  afterAll(async () => {
    await store?.close();
  });

  it('runs every statement as a background slice, never while a read is in flight, and a read waits for one slice at most', async () => {
    const lanes = new RecordingLanes(sql);
    const tracker = new ShapeTracker(lanes, { logger: memoryLogger(), kindOf: () => 'open' });
    const newest = await store.latestEventId();
    tracker.start();
    const overlaps: number[] = [];
    let reads = 0;
    try {
      while (tracker.shapedThrough < newest) {
        const slicesBefore = lanes.slicesStarted;
        const runningAtStart = lanes.slicesRunning;
        // A read of the list page kind, on the foreground lane.
        await lanes.foreground.query('SELECT events.id FROM events ORDER BY events.received_at DESC, events.id DESC LIMIT 50');
        // Slices that began while this read was queued or running (beyond the one already in progress).
        overlaps.push(lanes.slicesStarted - slicesBefore + runningAtStart);
        reads++;
        // Reads come one by one (a reader sending statement after statement keeps the background waiting: foreground.test.ts).
        await new Promise((resolve) => setTimeout(resolve, 2));
        if (reads > 100_000) throw new Error('the tracker never caught up');
      }
    } finally {
      await tracker.stop();
    }
    expect(reads).toBeGreaterThan(10);
    expect(lanes.sliceStarts.length).toBeGreaterThan(3);
    // No slice started while a foreground statement was in flight …
    expect(lanes.sliceStarts.every((inFlight) => inFlight === 0)).toBe(true);
    // … so a read waited for at most the slice in progress when it was sent.
    expect(Math.max(...overlaps)).toBeLessThanOrEqual(1);
    const types = await store.shapes.list('hooks');
    expect(types.map((type) => [type.event_type, type.events_seen])).toEqual([
      ['type.0', 150],
      ['type.1', 150],
      ['type.2', 150],
      ['type.3', 150],
    ]);
  }, 120_000);

  it('lets the search index’s backfill have the lane first, and shapes once it is done', async () => {
    await sql.exec('UPDATE shape_state SET shaped_id = 0, generation = generation + 1; TRUNCATE shapes, event_shapes');
    const lanes = new RecordingLanes(sql);
    let backfilling = true;
    const tracker = new ShapeTracker(lanes, { logger: memoryLogger(), kindOf: () => 'open', yieldTo: () => backfilling });
    tracker.start();
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(lanes.slicesStarted).toBe(0);
      expect(tracker.shapedThrough).toBe(0);
      backfilling = false;
      const newest = await store.latestEventId();
      await expect.poll(() => tracker.shapedThrough, { timeout: 30_000 }).toBe(newest);
    } finally {
      await tracker.stop();
    }
  }, 60_000);
});
