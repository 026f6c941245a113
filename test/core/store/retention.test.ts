import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsDir } from '../../../src/core/paths.js';
import { EventStore } from '../../../src/core/store/event-store.js';
import { RETENTION_BATCH_ROWS } from '../../../src/core/store/rejections.js';
import { migrate } from '../../../src/core/store/migrations.js';
import { EVENT_ID_SPAN } from '../../../src/core/store/sql-builders.js';
import { openPglite, type SqlClient } from '../../../src/core/store/sql-client.js';
import { startTestSwitchboard } from '../../helpers/core.js';
import { newEvent } from '../../helpers/events.js';

/**
 * Retention deletes in bounded batches and yields between them (DESIGN §5): deliveries and
 * queries that arrive while it removes ~100k rows are served during the run, not after it.
 * Latency numbers belong to the benchmark (bench/store.js); this checks the behaviour.
 */

const SEEDED = 100_000;
const MAX_ROWS = 1_000;

describe('retention under ingest', () => {
  let client: SqlClient;
  let store: EventStore;

  beforeAll(async () => {
    client = await openPglite('memory://');
    await migrate(client, migrationsDir());
    await client.exec(`
      INSERT INTO events (provider, family, event_type, trust_mode, verified, payload, payload_size, received_at)
      SELECT 'old', 'webhook', 'ping', 'open', false, convert_to('{"n":' || g || '}', 'UTF8'), 10,
             now() - interval '1 day' + g * interval '1 millisecond'
      FROM generate_series(1, ${SEEDED}) AS g;
      ANALYZE events;`);
    store = new EventStore(client);
  }, 300_000);
  afterAll(async () => {
    await store?.close();
  });

  it('serves deliveries and queries between its batches and keeps every new event', async () => {
    let running = true;
    const retention = store.applyRetention({ max_age_days: 30, max_rows: MAX_ROWS, max_rejections: 100 }).finally(() => (running = false));
    const inserted: number[] = [];
    let insertsDuring = 0;
    let queriesDuring = 0;
    while (running) {
      const { event } = await store.insertEvent(newEvent({ provider: 'live' }));
      inserted.push(event.id);
      if (running) insertsDuring++;
      const page = await store.listEvents({ limit: 50 });
      expect(page.items[0]!.id).toBeGreaterThanOrEqual(event.id);
      if (running) queriesDuring++;
    }
    const deleted = await retention;

    // Several batches ran, and work was served between them rather than queued behind the run.
    expect(SEEDED / RETENTION_BATCH_ROWS).toBeGreaterThanOrEqual(10);
    expect(insertsDuring).toBeGreaterThanOrEqual(5);
    expect(queriesDuring).toBeGreaterThanOrEqual(5);
    // Every event stored during the run is newer than the cut-off and survives it.
    const live = await client.query<{ id: number | string }>(`SELECT id FROM events WHERE provider = 'live' ORDER BY id`);
    expect(live.map((row) => Number(row.id))).toEqual(inserted);
    const [{ n }] = (await client.query<{ n: number | string }>('SELECT count(*) AS n FROM events')) as [{ n: number | string }];
    expect(Number(n)).toBeLessThanOrEqual(MAX_ROWS + inserted.length);
    expect(Number(n)).toBeGreaterThanOrEqual(MAX_ROWS);
    expect(deleted.events).toBe(SEEDED + inserted.length - Number(n));
  }, 300_000);

  it('walks nothing to find the max_rows cut when the events cannot exceed it (their ids span no more)', async () => {
    const seeks = () => store.lanes.sliceStats()['retention: seek']?.slices ?? 0;
    const [{ n }] = (await client.query<{ n: number | string }>('SELECT count(*) AS n FROM events')) as [{ n: number | string }];
    const [{ span }] = (await client.query<{ span: number | string }>('SELECT max(id) - min(id) + 1 AS span FROM events')) as [{ span: number | string }];
    expect(Number(span)).toBeGreaterThanOrEqual(Number(n));
    // The span is two probes of the primary key at any size, never a scan of the table.
    const plan = (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${EVENT_ID_SPAN}`)).map((row) => row['QUERY PLAN']).join('\n');
    expect(plan).toMatch(/Index Only Scan( Backward)? using events_pkey/);
    expect(plan).not.toMatch(/Seq Scan/);
    let before = seeks();
    expect(await store.applyRetention({ max_age_days: 30, max_rows: Number(span), max_rejections: 100 })).toEqual({ events: 0, rejections: 0 });
    expect(seeks() - before).toBe(0); // one statement for the span, no walk
    // One more than fits: the cut is walked to, and exactly the oldest goes.
    before = seeks();
    const [oldest] = await client.query<{ id: number | string }>('SELECT id FROM events ORDER BY received_at, id LIMIT 1');
    expect(await store.applyRetention({ max_age_days: 30, max_rows: Number(n) - 1, max_rejections: 100 })).toEqual({ events: 1, rejections: 0 });
    expect(seeks() - before).toBeGreaterThanOrEqual(1);
    expect(await client.query('SELECT id FROM events WHERE id = $1', [oldest!.id])).toEqual([]);
  }, 120_000);
});

describe('retention on a running switchboard', () => {
  it('ends a run quietly when the switchboard stops under it', async () => {
    const t = await startTestSwitchboard({}, { retentionFirstRunMs: 0 });
    const store = t.sb.store;
    const original = store.applyRetention.bind(store);
    let entered!: () => void;
    const inRun = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let outcome: Promise<unknown> = Promise.resolve();
    // Holds the run until the database is closed: what a stop in the middle of a long run does.
    store.applyRetention = (policy) => {
      entered();
      const run = held.then(() => original(policy));
      outcome = run.catch((error: Error) => error);
      return run;
    };
    await inRun;
    await t.close();
    release();
    expect(await outcome).toMatchObject({ message: expect.stringMatching(/closed/) });
    await new Promise((resolve) => setImmediate(resolve));
    expect(t.logger.lines.filter((line) => line.startsWith('error'))).toEqual([]);
  });
});
