import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsDir } from '../../../src/core/paths.js';
import { EventStore } from '../../../src/core/store/event-store.js';
import { migrate } from '../../../src/core/store/migrations.js';
import type { SqlClient } from '../../../src/core/store/sql-client.js';
import { newEvent } from '../../helpers/events.js';
import { PGLITE, POSTGRESQL } from '../../helpers/database-backends.js';

/**
 * What the Events list asks of the store beyond the basic filters: a type prefix (the UI's type
 * box) and each row's last replay (the list marks failed forwards). Both must stay on indexes:
 * the store's own statements are captured and EXPLAINed.
 */

interface Recorded {
  sql: string;
  params: readonly unknown[];
}

/** The real client, remembering the statements the store sent. */
function recording(client: SqlClient, log: Recorded[]): SqlClient {
  return {
    kind: client.kind,
    query: (sql, params = [], options) => {
      // The trigram step carries its planner settings (it used to run in a transaction): marked too.
      if (options?.settings?.length) log.push({ sql: 'TRANSACTION', params: [] });
      log.push({ sql, params });
      return client.query(sql, params, options);
    },
    exec: (sql) => client.exec(sql),
    transaction: (fn) => {
      // The trigram step runs in a transaction (its planner settings): marked, not unwrapped.
      log.push({ sql: 'TRANSACTION', params: [] });
      return client.transaction(fn);
    },
    close: () => client.close(),
  };
}

describe.each([PGLITE, POSTGRESQL])('the Events list on $name', (backend) => {
  let client: SqlClient;
  let store: EventStore;
  let cleanup = async () => {};
  let available = true;
  const statements: Recorded[] = [];

  const plan = async (statement: Recorded) =>
    (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${statement.sql}`, statement.params)).map((row) => row['QUERY PLAN']).join('\n');

  beforeAll(async () => {
    const opened = await backend.open();
    if (!opened) {
      available = false;
      return;
    }
    ({ client, cleanup } = opened);
    await migrate(client, migrationsDir());
    store = new EventStore(recording(client, statements));
  });
  afterAll(async () => {
    if (!available) return;
    await store.close();
    await cleanup();
  });

  it('matches a type prefix literally, through the type index', async (context) => {
    if (!available) return context.skip();
    const types = ['pull_request.opened', 'pull_request.closed', 'pullXrequest.opened', 'push', '100%.done', null];
    const ids: Record<string, number> = {};
    for (const type of types) ids[String(type)] = (await store.insertEvent(newEvent({ provider: 'p', event_type: type }))).event.id;
    const listed = async (prefix: string) => (await store.listEvents({ provider: 'p', event_type_prefix: prefix, limit: 10 })).items.map((event) => event.event_type);

    expect(await listed('pull_request')).toEqual(['pull_request.closed', 'pull_request.opened']);
    expect(await listed('pu')).toEqual(['push', 'pullXrequest.opened', 'pull_request.closed', 'pull_request.opened']);
    // `_` and `%` are text, not LIKE wildcards.
    expect(await listed('pull_')).toEqual(['pull_request.closed', 'pull_request.opened']);
    expect(await listed('%')).toEqual([]);
    expect(await listed('100%')).toEqual(['100%.done']);
    expect(await listed('push')).toEqual(['push']);
    // Export (what the list's Export button asks for) takes the same prefix.
    const exported = await store.exportBatch({ provider: 'p', event_type_prefix: 'pull_' }, null, { rows: 10, bytes: 1_000_000 });
    expect(exported.events.map((event) => event.event_type)).toEqual(['pull_request.opened', 'pull_request.closed']);

    await client.query(
      `INSERT INTO events (provider, family, event_type, trust_mode, verified, headers, payload, payload_size)
       SELECT 'bulk', 'webhook', 'bulk.' || (g % 20), 'open', false, '{}'::jsonb, '\\x7b7d'::bytea, 2 FROM generate_series(1, 20000) AS g`,
    );
    // A rare prefix among many other rows is a range of (event_type, received_at, id) where the
    // database collation is C (PGlite's); elsewhere Postgres filters, which is still correct.
    if (client.kind !== 'pglite') return;
    await store.analyze();
    statements.length = 0;
    await store.listEvents({ event_type_prefix: 'pull_request.', limit: 100 });
    expect(await plan(statements.find((statement) => statement.sql.includes('LIKE'))!)).toContain('events_type_received_idx');
  });

  it('walks window after window for a search the index would not narrow down, exactly, and stops on time with a cursor', async (context) => {
    if (!available) return context.skip();
    // 3,000 events, one in 25 holding the word: the first window (1,000 newest) finds 40, not
    // the page of 50. A store told the index never narrows (as for a phrase of words that are in
    // every event of a million) walks on: exactly the newest 50 holding it, in order.
    await client.query(
      `INSERT INTO events (provider, family, event_type, trust_mode, verified, headers, payload, payload_size, received_at)
       SELECT 'freq', 'webhook', 'freq.event', 'open', false, '{}'::jsonb,
              convert_to('{"n":' || g || CASE WHEN g % 25 = 0 THEN ',"note":"Marmoset"' ELSE '' END || '}', 'UTF8'), 20,
              now() - interval '1 hour' + g * interval '1 millisecond'
       FROM generate_series(1, 3000) AS g`,
    );
    const wanted = (await client.query<{ id: number | string }>(
      `SELECT id FROM events WHERE provider = 'freq' AND convert_from(payload, 'UTF8') ILIKE '%marmoset%' ORDER BY received_at DESC, id DESC`,
    )).map((row) => Number(row.id));
    expect(wanted).toHaveLength(120);
    // (With time enough: a loaded machine must not make this run out of time.)
    const walking = new EventStore(recording(client, statements), { search: { indexMaxCandidates: 0, budgetMs: 60_000 } });
    statements.length = 0;
    const page = await walking.listEvents({ provider: 'freq', search: 'MARMOSET', limit: 50 });
    expect(page.items.map((event) => event.id)).toEqual(wanted.slice(0, 50));
    expect(page.searched_back_to).toBeUndefined();
    // Two windows, no trigram step (which runs in a transaction for its planner settings).
    expect(statements.filter((statement) => statement.sql.includes('win AS MATERIALIZED'))).toHaveLength(2);
    expect(statements.some((statement) => statement.sql === 'TRANSACTION')).toBe(false);
    const next = await walking.listEvents({ provider: 'freq', search: 'marmoset', limit: 50, cursor: page.next_cursor });
    expect(next.items.map((event) => event.id)).toEqual(wanted.slice(50, 100));

    // Out of time after every window: each answer is what one window found, with where it
    // stopped; following the cursors gives exactly every match, newest first, and then stops.
    const hurried = new EventStore(client, { search: { indexMaxCandidates: 0, budgetMs: 0 } });
    const found: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const short = await hurried.listEvents({ provider: 'freq', search: 'marmoset', limit: 50, ...(cursor ? { cursor } : {}) });
      pages++;
      found.push(...short.items.map((event) => event.id));
      if (short.searched_back_to !== undefined) {
        expect(short.items.length).toBeLessThanOrEqual(50);
        expect(short.next_cursor).toBeDefined();
        for (const event of short.items) expect(event.received_at >= short.searched_back_to).toBe(true);
      }
      cursor = short.next_cursor;
    } while (cursor && pages < 20);
    expect(found).toEqual(wanted);
    expect(pages).toBeGreaterThan(2);

    // An export with a search reads bounded windows too: batch after batch, some empty, each
    // saying where the next starts, together exactly the matches, oldest first.
    const exported: number[] = [];
    let after = null;
    let batches = 0;
    let empty = 0;
    do {
      const batch = await walking.exportBatch({ provider: 'freq', search: 'marmoset' }, after, { rows: 7, bytes: 1_000_000, scanRows: 100 });
      exported.push(...batch.events.map((event) => event.id));
      if (batch.events.length === 0) empty++;
      after = batch.next;
      batches++;
    } while (after && batches < 1_000);
    expect(exported).toEqual([...wanted].reverse());
    expect(empty).toBeGreaterThan(0);
    const none = await walking.exportBatch({ provider: 'freq', search: 'no such phrase' }, null, { rows: 7, bytes: 1_000_000, scanRows: 100 });
    expect(none.events).toEqual([]);
    expect(none.next).not.toBeNull();

    // A phrase no event holds, out of time: an empty page that says how far it searched.
    const nothing = await hurried.listEvents({ provider: 'freq', search: '"n":1 marmoset', limit: 50 });
    expect(nothing.items).toEqual([]);
    expect(nothing.searched_back_to).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(nothing.next_cursor).toBeDefined();
  });

  it('gives each listed event its last replay, looked up by replays_event_idx', async (context) => {
    if (!available) return context.skip();
    const [never, recovered, failing] = await Promise.all([1, 2, 3].map(async () => (await store.insertEvent(newEvent({ provider: 'r' }))).event.id));
    const replay = { target_url: 'http://127.0.0.1:3000/', resigned: false, response_ms: 3, response_headers: {}, response_body: null, requested_by: 'forward' as const };
    await store.insertReplay({ ...replay, event_id: recovered!, delivered: false, response_status: null, error: 'ECONNREFUSED' });
    await store.insertReplay({ ...replay, event_id: recovered!, delivered: true, response_status: 200, error: null, requested_by: 'ui' });
    await store.insertReplay({ ...replay, event_id: failing!, delivered: true, response_status: 200, error: null });
    await store.insertReplay({ ...replay, event_id: failing!, delivered: true, response_status: 500, error: null, requested_by: 'mcp' });

    // Many replays of other events: the lookup must probe the index, not scan them all.
    await client.query(
      `INSERT INTO replays (event_id, target_url, resigned, delivered, response_status, response_ms, requested_by)
       SELECT id, 'http://127.0.0.1:3000/', false, true, 200, 1, 'forward' FROM events, generate_series(1, 3) WHERE provider = 'bulk'`,
    );
    statements.length = 0;
    const last = await store.lastReplays([never!, recovered!, failing!]);
    expect(last.has(never!)).toBe(false);
    expect(last.get(recovered!)).toMatchObject({ delivered: true, response_status: 200, requested_by: 'ui' });
    expect(last.get(failing!)).toMatchObject({ delivered: true, response_status: 500, requested_by: 'mcp' });
    expect(last.get(failing!)!.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(await store.lastReplays([])).toEqual(new Map());

    await store.analyze();
    expect(await plan(statements[0]!)).toContain('replays_event_idx');
  });
});
