import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsDir } from '../../../src/core/paths.js';
import { EventStore } from '../../../src/core/store/event-store.js';
import { migrate } from '../../../src/core/store/migrations.js';
import { backfillSearchBatch, SearchIndexer } from '../../../src/core/store/search-indexer.js';
import { openPglite, type SqlClient } from '../../../src/core/store/sql-client.js';
import { memoryLogger } from '../../helpers/core.js';
import { newEvent } from '../../helpers/events.js';

// The search text and the search index while it is being built (DESIGN §5, §17; migrations/0007):
// the text is the payload's text, UTF-8 decoded — never an escape encoding (issue #22: `ü` was
// kept as `\303\274`, so a search for 303 found the Zürich event) — and while the index is rebuilt
// newest first, a search finds what the index covers through it, walks the rest within its budget,
// and says how far indexing has come.

const ROWS = 3_000;
const OLD_WORD = 'quokkaold';
const NEW_WORD = 'quokkanew';

describe('search text and the index backfill', () => {
  let client: SqlClient;
  let store: EventStore;

  beforeAll(async () => {
    client = await openPglite('memory://');
    await migrate(client, migrationsDir());
    store = new EventStore(client, { search: { budgetMs: 5, windowRows: 200 } });
    await client.exec(`
      INSERT INTO events (provider, family, event_type, trust_mode, verified, payload, payload_size, received_at)
      SELECT 'p', 'webhook', 'order.paid', 'open', false, p.payload, octet_length(p.payload), timestamptz '2026-01-01T00:00:00Z' + g * interval '1 second'
      FROM generate_series(1, ${ROWS}) AS g,
           LATERAL (SELECT convert_to('{"n":' || g || ',"note":"' || CASE WHEN g = 10 THEN '${OLD_WORD}' WHEN g = ${ROWS - 10} THEN '${NEW_WORD}' ELSE 'delivered' END || '"}', 'UTF8') AS payload) AS p;`);
    // What migration 0007 leaves on a data dir with events: nothing indexed, the backfill at the top.
    await client.exec(`TRUNCATE event_search; UPDATE search_state SET indexed_id = ${ROWS}, floor_received_at = 'infinity', floor_id = 0, backfill_rows = ${ROWS};`);
  }, 60_000);
  afterAll(() => store?.close());

  it('says how far indexing has come when a search runs out of time before the index covers it', async () => {
    const page = await store.listEvents({ limit: 20, search: OLD_WORD });
    expect(page.items).toEqual([]);
    expect(page.searched_back_to).toEqual(expect.any(String));
    expect(page.index_progress).toEqual({ indexed: 0, total: ROWS });
  });

  it('finds, through the index, what the backfill has covered — newest first — and walks on below it', async () => {
    // A third of the log, from the newest down.
    for (let done = 0; done < ROWS / 3; done += 100) await backfillSearchBatch(client, 100);
    const recent = await store.listEvents({ limit: 20, search: NEW_WORD });
    expect(recent.items.map((event) => event.id)).toEqual([ROWS - 10]);
    expect(recent.searched_back_to).toBeDefined(); // the walk below the floor ran out of time
    expect(recent.index_progress).toEqual({ indexed: ROWS / 3, total: ROWS });
    // The old one is below the floor: not found yet, and said so.
    const old = await store.listEvents({ limit: 20, search: OLD_WORD });
    expect(old.items).toEqual([]);
    expect(old.index_progress!.indexed).toBe(ROWS / 3);
  });

  it('finds everything once the backfill is done, and says nothing about progress', async () => {
    await new SearchIndexer(store.lanes, { logger: memoryLogger() }).catchUp();
    const [state] = await client.query<{ floor_received_at: string | null; backfill_rows: number | string }>('SELECT floor_received_at, backfill_rows FROM search_state');
    expect(state).toEqual({ floor_received_at: null, backfill_rows: expect.anything() });
    expect(Number(state!.backfill_rows)).toBe(0);
    const old = await store.listEvents({ limit: 20, search: OLD_WORD });
    expect(old.items.map((event) => event.id)).toEqual([10]);
    expect(old.index_progress).toBeUndefined();
    expect(old.searched_back_to).toBeUndefined();
  });

  it('matches the payload as text: digits of an escape encoding never match, non-ASCII letters do, in any case', async () => {
    const stored = await Promise.all(
      [
        '{"city":"Zürich","street":"Bahnhofstraße 1"}',
        '{"path":"C:\\\\303\\\\temp"}', // a literal backslash and 303 in the text
      ].map((body) => store.insertEvent(newEvent({ provider: 'utf8', payload: Buffer.from(body) }))),
    );
    const binary = await store.insertEvent(newEvent({ provider: 'utf8', content_type: 'application/octet-stream', payload: Buffer.from([0x00, 0xff, 0x66, 0x69, 0x6c, 0x65, 0x6e, 0x61, 0x6d, 0x65, 0xc3]) }));
    const ids = async (search: string) => (await store.listEvents({ limit: 10, provider: 'utf8', search })).items.map((event) => event.id).sort();
    const [zurich, windows] = stored.map((result) => result.event.id) as [number, number];
    for (const indexed of [false, true]) {
      expect(await ids('303')).toEqual([windows]);
      expect(await ids('zürich')).toEqual([zurich]);
      expect(await ids('ZÜRICH')).toEqual([zurich]);
      expect(await ids('straße')).toEqual([zurich]);
      expect(await ids('274')).toEqual([]);
      // A payload that is not UTF-8 is searched by its text; its other bytes are left out.
      expect(await ids('filename')).toEqual([binary.event.id]);
      expect(await ids('377')).toEqual([]);
      if (!indexed) await new SearchIndexer(store.lanes, { logger: memoryLogger() }).catchUp();
    }
  });
});
