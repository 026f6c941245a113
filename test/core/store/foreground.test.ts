import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseLanes, SliceSize } from '../../../src/core/store/foreground.js';
import { openPgliteInWorker, type WorkerSqlClient } from '../../../src/core/store/pglite-worker.js';

// Foreground first (DESIGN §17, src/core/store/foreground.ts): a background slice starts only
// when no foreground statement is in flight, slices go one at a time, and a foreground statement
// sent during a slice waits for that slice alone. Against the embedded database in its worker
// thread, as serve and the desktop run it.

describe('the database lanes', () => {
  let dir: string;
  let db: WorkerSqlClient;
  let lanes: DatabaseLanes;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchboard-lanes-'));
    db = await openPgliteInWorker(dir);
    lanes = new DatabaseLanes(db);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('starts a background slice only once the foreground statements in flight have answered', async () => {
    const order: string[] = [];
    const foreground = lanes.foreground.query('SELECT pg_sleep(0.2)').then(() => order.push('foreground'));
    const background = lanes.background((sql) => sql.query('SELECT 1')).then(() => order.push('background'));
    expect(lanes.foregroundInFlight).toBe(1);
    await Promise.all([foreground, background]);
    expect(order).toEqual(['foreground', 'background']);
  });

  it('keeps waiting while a reader sends statement after statement, and runs once it is done', async () => {
    const order: string[] = [];
    const background = lanes.background((sql) => sql.query('SELECT 1')).then(() => order.push('background'));
    const reader = (async () => {
      // A page, then its last replays: sent as soon as the first answered, never cut in two.
      for (let i = 0; i < 5; i++) {
        await lanes.foreground.query('SELECT pg_sleep(0.01)');
        order.push(`read ${i}`);
      }
    })();
    await Promise.all([background, reader]);
    expect(order).toEqual(['read 0', 'read 1', 'read 2', 'read 3', 'read 4', 'background']);
  });

  it('runs slices one at a time, and a foreground statement sent during one right after it', async () => {
    const order: string[] = [];
    const slices = [0, 1, 2].map((i) =>
      lanes.background(async (sql) => {
        order.push(`slice ${i} begins`);
        await sql.query('SELECT pg_sleep(0.05)');
        order.push(`slice ${i} ends`);
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    const read = lanes.foreground.query('SELECT 1').then(() => order.push('read'));
    await Promise.all([...slices, read]);
    expect(order.slice(0, 3)).toEqual(['slice 0 begins', 'slice 0 ends', 'read']);
    expect(order.slice(3)).toEqual(['slice 1 begins', 'slice 1 ends', 'slice 2 begins', 'slice 2 ends']);
  });

  it('lets an urgent slice go between the foreground statements instead of waiting for a gap', async () => {
    const order: string[] = [];
    const foreground = lanes.foreground.query('SELECT pg_sleep(0.2)').then(() => order.push('foreground'));
    const urgent = lanes.background((sql) => sql.query('SELECT 1'), { urgent: true }).then(() => order.push('urgent'));
    await Promise.all([foreground, urgent]);
    // Sent at once: the database answers it after the statement before it, not after a gap.
    expect(order).toEqual(['foreground', 'urgent']);
    expect(lanes.foregroundInFlight).toBe(0);
  });

  it('says how long the foreground has been quiet: nothing while a statement is in flight, then the time since the last', async () => {
    const statement = lanes.foreground.query('SELECT pg_sleep(0.1)');
    expect(lanes.quietFor()).toBe(0);
    await statement;
    const right = lanes.quietFor();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(lanes.quietFor()).toBeGreaterThanOrEqual(right + 50);
  });

  it('keeps what each job’s slices cost, by label: what a read could have waited for', async () => {
    await lanes.background((sql) => sql.query('SELECT pg_sleep(0.03)'), { label: 'test: slow' });
    await lanes.background((sql) => sql.query('SELECT 1'), { label: 'test: quick' });
    await expect(lanes.background((sql) => sql.query('SELECT nonsense FROM nowhere'), { label: 'test: quick' })).rejects.toThrow();
    const stats = lanes.sliceStats();
    expect(stats['test: slow']).toEqual({ slices: 1, totalMs: expect.any(Number), maxMs: expect.any(Number), over10: 1, over25: 1 });
    expect(stats['test: slow']!.maxMs).toBeGreaterThanOrEqual(25);
    expect(stats['test: quick']!.slices).toBe(2);
    expect(stats.background!.slices).toBeGreaterThan(0); // the slices of the tests above, unlabelled
  });

  it('counts a failed foreground statement out again', async () => {
    await expect(lanes.foreground.query('SELECT nonsense FROM nowhere')).rejects.toThrow();
    expect(lanes.foregroundInFlight).toBe(0);
    expect(await lanes.background((sql) => sql.query<{ one: number }>('SELECT 1 AS one'))).toEqual([{ one: 1 }]);
  });
});

describe('slice sizes', () => {
  it('aim each slice at the target time: a slow slice halves the size at most, quick ones grow it back', () => {
    const size = new SliceSize({ initialRows: 20, maxRows: 200, targetMs: 4 });
    expect(size.rows).toBe(20);
    size.record(20, 40); // 10× too slow, once: a busy machine, or a heavy slice
    expect(size.rows).toBe(10);
    size.record(10, 5); // a little slow: in proportion
    expect(size.rows).toBe(8);
    for (let i = 0; i < 10; i++) size.record(size.rows, 3); // within the target: kept
    expect(size.rows).toBe(8);
    for (let i = 0; i < 20; i++) size.record(size.rows, 0.5); // quick: grows, up to maxRows
    expect(size.rows).toBe(200);
    size.record(3, 0.1); // a short last slice says nothing about growing
    expect(size.rows).toBe(200);
    for (let i = 0; i < 20; i++) size.record(size.rows, 100); // never below a quarter of the first size
    expect(size.rows).toBe(5);
  });
});
