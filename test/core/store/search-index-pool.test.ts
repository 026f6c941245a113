import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsDir } from '../../../src/core/paths.js';
import { EventStore } from '../../../src/core/store/event-store.js';
import { migrate } from '../../../src/core/store/migrations.js';
import { openPgliteInWorker, type WorkerSqlClient } from '../../../src/core/store/pglite-worker.js';
import { MERGE_EVERY, SearchIndexer, searchIndexMode, type BufferPool } from '../../../src/core/store/search-indexer.js';
import { memoryLogger, withDeadline } from '../../helpers/core.js';

// A large backfill on the embedded database (src/core/store/search-indexer.ts, DESIGN §17): with
// the 16 MB pool every merge of GIN's pending list at 1M events is one step of 55–200 ms that a
// read waits for. So with many events to index the database is reopened with the large pool, the
// indexer merges fast update's entries itself every MERGE_EVERY events (short steps), and gives
// the pool back once caught up; a small backlog is indexed directly on the small pool.

const ROWS = 3_000;

describe('the search index and the buffer pool', () => {
  let dir: string;
  let client: WorkerSqlClient;
  let store: EventStore;
  const pool: BufferPool = {
    get size() {
      return client.bufferPool;
    },
    resize: (size) => client.setBufferPool(size),
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchboard-index-pool-'));
    client = await openPgliteInWorker(dir);
    await migrate(client, migrationsDir());
    store = new EventStore(client, {});
    await client.exec(`
      INSERT INTO events (provider, family, event_type, trust_mode, verified, payload, payload_size, received_at)
      SELECT 'p', 'webhook', 'order.paid', 'open', false, p.payload, octet_length(p.payload), timestamptz '2026-01-01T00:00:00Z' + g * interval '1 second'
      FROM generate_series(1, ${ROWS}) AS g,
           LATERAL (SELECT convert_to('{"n":' || g || ',"note":"parcel ' || md5(g::text) || (CASE WHEN g = 17 THEN ' wombat' ELSE '' END) || '"}', 'UTF8') AS payload) AS p;`);
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const needsBackfill = () =>
    client.exec(`TRUNCATE event_search; UPDATE search_state SET indexed_id = ${ROWS}, floor_received_at = 'infinity', floor_id = 0, backfill_rows = ${ROWS};`);
  const sharedBuffers = async () => (await client.query<{ shared_buffers: string }>('SHOW shared_buffers'))[0]!.shared_buffers;
  const indexed = async () => Number((await client.query<{ n: number | string }>('SELECT count(*) AS n FROM event_search'))[0]!.n);

  it('takes the large pool for a large backfill, indexes directly while reads come and in merged batches when not, then gives the pool back', async () => {
    await needsBackfill();
    const logger = memoryLogger();
    const indexer = new SearchIndexer(store.lanes, { logger, adaptIndexMode: true, pool, growAt: 1_000, awayMs: 1_000 });
    let reading = true;
    const reader = (async () => {
      while (reading) {
        await store.listEvents({ limit: 50 });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    // At the start, before any read: the large pool for a large backfill.
    await indexer.preparePool();
    expect(client.bufferPool).toBe('large');
    indexer.start();
    try {
      expect(await sharedBuffers()).toBe('128MB');
      await expect.poll(() => indexer.mode, { timeout: 10_000 }).toBe('direct');
      expect(indexer.backfilling).toBe(true);
      reading = false;
      await reader;
      // Nobody reads for awayMs: fast update, merged by the indexer every MERGE_EVERY events, until
      // caught up. (Watched without a read: a read would send it back to direct.)
      await expect.poll(() => indexer.mode, { timeout: 10_000, interval: 5 }).toBe('fast');
      const leftForFast = indexer.left;
      expect(leftForFast).toBeGreaterThan(MERGE_EVERY);
      await expect.poll(() => indexer.backfilling, { timeout: 60_000 }).toBe(false);
      const stats = store.lanes.sliceStats();
      expect(stats['search index: backfill, fast']!.slices).toBeGreaterThan(0);
      expect(stats['search index: merge']!.slices).toBeGreaterThanOrEqual(Math.floor(leftForFast / MERGE_EVERY));
      // Caught up and quiet: the small pool again (the loop looks at its next step).
      await expect.poll(() => client.bufferPool, { timeout: 20_000 }).toBe('small');
      expect(await sharedBuffers()).toBe('16MB');
      expect(await indexed()).toBe(ROWS);
      const found = await store.listEvents({ search: 'wombat', limit: 5 });
      expect(found.items.map((event) => Number(event.id))).toEqual([17]);
      expect(found.index_progress).toBeUndefined();
      expect(logger.lines.some((line) => line.includes('events to index; the database took a 128 MB buffer pool'))).toBe(true);
      expect(logger.lines.some((line) => line.includes('caught up; the database gave its large buffer pool back'))).toBe(true);
    } finally {
      reading = false;
      await reader;
      await indexer.stop();
    }
  }, 120_000);

  it('indexes a small backlog directly on the small pool, reads or none (a merge there is one long step)', async () => {
    await needsBackfill();
    const merges = store.lanes.sliceStats()['search index: merge']?.slices ?? 0;
    const indexer = new SearchIndexer(store.lanes, { logger: memoryLogger(), adaptIndexMode: true, pool, growAt: ROWS + 1, awayMs: 1_000 });
    await indexer.preparePool();
    indexer.start();
    try {
      await expect.poll(() => indexer.backfilling, { timeout: 60_000 }).toBe(false);
      expect(client.bufferPool).toBe('small');
      expect(indexer.mode).toBe('direct');
      expect(await searchIndexMode(client)).toBe('direct');
      expect(store.lanes.sliceStats()['search index: merge']?.slices ?? 0).toBe(merges);
      expect(await indexed()).toBe(ROWS);
    } finally {
      await indexer.stop();
    }
  }, 90_000);

  it('catches up when asked while its own loop runs on the small pool (neither undoes the other’s mode)', async () => {
    // The loop goes direct on the small pool; catchUp() used to force fast update: each slice of
    // one switched the indexes back from the other's mode, and neither ever indexed an event.
    await needsBackfill();
    const indexer = new SearchIndexer(store.lanes, { logger: memoryLogger(), adaptIndexMode: true, pool, growAt: ROWS + 1, awayMs: 1_000 });
    await indexer.preparePool();
    indexer.start();
    try {
      await expect.poll(() => indexer.mode, { timeout: 10_000 }).toBe('direct');
      const switches = indexer.modeSwitches;
      await withDeadline(indexer.catchUp(), 'catchUp', 60_000);
      expect(indexer.backfilling).toBe(false);
      expect(indexer.modeSwitches).toBe(switches);
      expect(await indexed()).toBe(ROWS);
    } finally {
      await indexer.stop();
    }
  }, 90_000);
});
