import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsDir } from '../../../src/core/paths.js';
import { EventStore } from '../../../src/core/store/event-store.js';
import { migrate } from '../../../src/core/store/migrations.js';
import { openPglite, type SqlClient } from '../../../src/core/store/sql-client.js';

/**
 * Retention must bound the data dir, not only the row count. The embedded database has no
 * autovacuum: the space of a deleted row is only reused after a VACUUM, so without
 * EventStore.reclaimSpace a log kept at max_rows grows by every new event for good.
 */

let client: SqlClient;
let store: EventStore;
let next = 1;

/** `n` events of ~2 KB each, with their search text, as the journal and the indexer leave them. */
async function add(n: number): Promise<void> {
  await client.query(
    `WITH ins AS (
       INSERT INTO events (id, provider, family, event_type, external_id, trust_mode, verified, headers, payload, payload_size, received_at)
       OVERRIDING SYSTEM VALUE
       SELECT g, 'p', 'webhook', 't', 'd-' || g, 'open', false, '{}'::jsonb, convert_to(repeat(md5(g::text), 64), 'UTF8'), 2048,
              timestamptz '2026-01-01' + g * interval '1 second'
       FROM generate_series($1::bigint, $2::bigint) AS g
       RETURNING id, payload, event_type
     )
     INSERT INTO event_search (event_id, doc, event_type) SELECT id, lower(encode(payload, 'escape')), event_type FROM ins`,
    [next, next + n - 1],
  );
  next += n;
}

const heapBytes = async () =>
  Number((await client.query<{ bytes: number | string }>(`SELECT pg_relation_size('events') + pg_relation_size('event_search') AS bytes`))[0]!.bytes);

beforeAll(async () => {
  client = await openPglite('memory://');
  await migrate(client, migrationsDir());
  store = new EventStore(client);
});
afterAll(async () => {
  await store?.close();
});

describe('retention on the embedded database', () => {
  it('gives the space of deleted events back, so a log kept at max_rows stops growing', async () => {
    const policy = { max_age_days: 3650, max_rows: 2_000, max_rejections: 50_000 };
    await add(4_000);
    expect((await store.applyRetention(policy)).events).toBe(2_000);
    await store.reclaimSpace();
    const kept = await heapBytes();

    // Cycles of 2,000 new events, retention back to 2,000, reclaim: the tables stay the size they were.
    for (let cycle = 0; cycle < 3; cycle++) {
      await add(2_000);
      expect((await store.applyRetention(policy)).events).toBe(2_000);
      await store.reclaimSpace();
    }
    expect(await heapBytes()).toBeLessThanOrEqual(kept * 1.1);

    // Without it, the same cycle grows the tables by what was added (what the data dir did before).
    const before = await heapBytes();
    await add(2_000);
    expect((await store.applyRetention(policy)).events).toBe(2_000);
    await add(2_000);
    expect((await store.applyRetention(policy)).events).toBe(2_000);
    expect(await heapBytes()).toBeGreaterThan(before * 1.5);

    const counts = await client.query<{ events: number | string; search: number | string }>(
      'SELECT (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM event_search) AS search',
    );
    expect(counts[0]).toEqual({ events: 2_000, search: 2_000 });
  });
});
