import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsDir } from '../../../src/core/paths.js';
import { EventStore } from '../../../src/core/store/event-store.js';
import { migrate } from '../../../src/core/store/migrations.js';
import { IDLE_MS, SearchIndexer, searchIndexMode } from '../../../src/core/store/search-indexer.js';
import { openPglite, type SqlClient } from '../../../src/core/store/sql-client.js';
import { memoryLogger } from '../../helpers/core.js';

// Foreground first, inside the trigram index (DESIGN §17, src/core/store/search-indexer.ts): GIN's
// fast update merges its pending list inside whichever insert fills it — one atomic step of
// 35–190 ms at 1M events that a read arriving meanwhile waits for. While someone is using the
// database the indexer has the indexes take entries directly (fastupdate off: every slice costs
// only its own rows); once nobody has for IDLE_MS it lets them batch again (fast, ~3× quicker).

// Enough that the backfill outlasts IDLE_MS of direct slices after the reads stop, on a quiet machine too
// (with 4,000 it could end before the switch back to fast update, leaving no fast slice to count).
const ROWS = 12_000;

describe('the search index while someone is reading', () => {
  let client: SqlClient;
  let store: EventStore;

  beforeAll(async () => {
    client = await openPglite('memory://');
    await migrate(client, migrationsDir());
    store = new EventStore(client, {});
    await client.exec(`
      INSERT INTO events (provider, family, event_type, trust_mode, verified, payload, payload_size, received_at)
      SELECT 'p', 'webhook', 'order.paid', 'open', false, p.payload, octet_length(p.payload), timestamptz '2026-01-01T00:00:00Z' + g * interval '1 second'
      FROM generate_series(1, ${ROWS}) AS g,
           LATERAL (SELECT convert_to('{"n":' || g || ',"note":"delivered to customer ' || md5(g::text) || '"}', 'UTF8') AS payload) AS p;`);
  }, 60_000);
  afterAll(() => store?.close());

  const needsBackfill = () =>
    client.exec(`TRUNCATE event_search; UPDATE search_state SET indexed_id = ${ROWS}, floor_received_at = 'infinity', floor_id = 0, backfill_rows = ${ROWS};`);

  it('takes entries directly while reads keep coming, and batches them again once nobody has read for a while', async () => {
    await needsBackfill();
    const indexer = new SearchIndexer(store.lanes, { logger: memoryLogger(), adaptIndexMode: true });
    let reading = true;
    let reads = 0;
    const reader = (async () => {
      while (reading) {
        await store.listEvents({ limit: 50 });
        reads++;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    indexer.start();
    try {
      await expect.poll(() => indexer.mode, { timeout: 10_000 }).toBe('direct');
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Slices run between the reads, with the indexes set to take entries directly.
      expect(await searchIndexMode(client)).toBe('direct');
      expect(indexer.backfilling).toBe(true);
      reading = false;
      await reader;
      expect(reads).toBeGreaterThan(5);
      // Nobody reads any more: after IDLE_MS the indexes batch again, and the backfill finishes.
      await expect.poll(() => indexer.mode, { timeout: IDLE_MS + 10_000 }).toBe('fast');
      expect(indexer.modeSwitches).toBeGreaterThanOrEqual(1);
      await expect.poll(() => indexer.backfilling, { timeout: 60_000 }).toBe(false);
      expect(await searchIndexMode(client)).toBe('fast');
      const [counted] = await client.query<{ n: number | string }>('SELECT count(*) AS n FROM event_search');
      expect(Number(counted!.n)).toBe(ROWS);
    } finally {
      reading = false;
      await reader;
      await indexer.stop();
    }
  }, 90_000);

  it('counts each job’s slices on the background lane, by label', async () => {
    const stats = store.lanes.sliceStats();
    // Labelled by the mode each slice ran in.
    expect(stats['search index: backfill, direct']).toEqual(expect.objectContaining({ slices: expect.any(Number), totalMs: expect.any(Number) }));
    expect(stats['search index: backfill, direct']!.slices).toBeGreaterThan(0);
    expect(stats['search index: backfill, fast']!.slices).toBeGreaterThan(0);
  });

  it('leaves the indexes as they are when told not to adapt them (PostgreSQL), and catchUp batches', async () => {
    await needsBackfill();
    await client.exec('ALTER INDEX event_search_doc_trgm_idx SET (fastupdate = off); ALTER INDEX event_search_type_trgm_idx SET (fastupdate = off)');
    const plain = new SearchIndexer(store.lanes, { logger: memoryLogger() });
    await store.listEvents({ limit: 5 }); // the foreground just ran: an adapting indexer would go direct
    await plain.catchUp();
    expect(plain.mode).toBeNull();
    expect(await searchIndexMode(client)).toBe('direct'); // untouched
    await needsBackfill();
    const adapting = new SearchIndexer(store.lanes, { logger: memoryLogger(), adaptIndexMode: true });
    await store.listEvents({ limit: 5 });
    await adapting.catchUp();
    expect(adapting.mode).toBe('fast');
    expect(await searchIndexMode(client)).toBe('fast');
  }, 60_000);
});
