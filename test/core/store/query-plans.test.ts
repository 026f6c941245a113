import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsDir } from '../../../src/core/paths.js';
import { encodeCursor } from '../../../src/core/store/cursor.js';
import { searchWindowRows, searchIndexStep, searchUsesIndex, searchWindowStep, SEARCH_WALK_MIN_ROWS, type SearchWindowRow } from '../../../src/core/store/search.js';
import { eventListStep, eventKeysAfterStep, eventsByKeysStep, firstEventAfterStep, nthNewestStep, providerSeenStep, rejectionListStep, replayListStep, retentionStatements } from '../../../src/core/store/sql-builders.js';
import type { EventQuery, SqlStep } from '../../../src/core/store/types.js';
import { migrate } from '../../../src/core/store/migrations.js';
import { backfillSearchBatch, indexSearchBatch } from '../../../src/core/store/search-indexer.js';
import type { SqlClient } from '../../../src/core/store/sql-client.js';
import { PGLITE, POSTGRESQL } from '../../helpers/database-backends.js';

/**
 * Every list query the store sends, EXPLAIN ANALYZEd on a seeded, ANALYZEd table: no Seq Scan,
 * no sort of a large part of the table, and no scan that reads a large part of it (an index
 * walk that filters every row is a full scan too). The statements come from the store's own
 * builders, so this checks the real query text.
 */

const ROWS = 40_000;
/** Reading or sorting more than this is a full scan in disguise (at 1M rows it would be 2.5%… of a lot). */
const MAX_ROWS_TOUCHED = ROWS / 20;

// Shaped like a real log: 4 common providers and a rare one, 40 types (one rare), mostly signed,
// a few test and imported events, one row per second. Every 5,000th payload has a rare word.
const SEED_EVENTS = `
INSERT INTO events (provider, family, event_type, external_id, trust_mode, verified, payload, payload_size, origin, received_at)
SELECT CASE WHEN g % 100 = 0 THEN 'rare' ELSE 'p' || (g % 4) END,
       'webhook',
       CASE WHEN g % 1000 = 7 THEN 'rare.type' ELSE 'type.' || (g % 40) END,
       'ext-' || g,
       CASE WHEN g % 500 = 0 THEN 'token' WHEN g % 3 = 0 THEN 'open' ELSE 'signed' END,
       g % 3 <> 0,
       p.payload, octet_length(p.payload),
       CASE WHEN g % 250 = 0 THEN 'test' WHEN g % 1000 = 1 THEN 'import' ELSE 'provider' END,
       timestamptz '2026-01-01T00:00:00Z' + g * interval '1 second'
FROM generate_series(1, ${ROWS}) AS g,
     LATERAL (SELECT convert_to('{"id":"evt_' || g || '","object":"event","customer":"cus_' || (g % 997)
       || '","status":"' || CASE WHEN g % 5000 = 3 THEN 'zebracorn' ELSE 'delivered' END
       || '","amount":' || (g * 7 % 100000) || ',"currency":"eur","description":"Order number ' || g || ' for Ada"}', 'UTF8') AS payload) AS p;
INSERT INTO rejections (provider, reason, hint, body_size, body_sha256, received_at)
SELECT CASE WHEN g % 100 = 0 THEN 'rare' ELSE 'p' || (g % 4) END, 'signature_mismatch', 'wrong secret', 10, 'x',
       timestamptz '2026-01-01T00:00:00Z' + g * interval '1 second'
FROM generate_series(1, ${ROWS / 2}) AS g;
INSERT INTO replays (event_id, target_url, resigned, delivered, requested_by)
SELECT (g % 2000) + 1, 'http://localhost:3000/', true, true, 'ui' FROM generate_series(1, ${ROWS / 2}) AS g;
ANALYZE events; ANALYZE rejections; ANALYZE replays;
`;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Plan Rows': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

function* nodes(node: PlanNode): Generator<PlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* nodes(child);
}

const TABLES = new Set(['events', 'rejections', 'replays']);

/**
 * What is wrong with a plan, or [] (ANALYZEd plans count actual rows; plain ones estimates).
 * `budget`: how many rows a scan may read (a search's first step walks the newest rows that pass
 * the filters up to searchWindowRows(limit) kept: reading a few per kept row is its design).
 */
function planProblems(plan: PlanNode, budget = MAX_ROWS_TOUCHED): string[] {
  const problems: string[] = [];
  for (const node of nodes(plan)) {
    const rows = (node['Actual Rows'] ?? node['Plan Rows']) * (node['Actual Loops'] ?? 1);
    const touched = rows + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0);
    if (node['Node Type'] === 'Seq Scan' && TABLES.has(node['Relation Name'] ?? '')) problems.push(`Seq Scan on ${node['Relation Name']}`);
    // Only measured rows count here: an estimate below a LIMIT is the size of the range, not what is read.
    if (node['Actual Rows'] !== undefined && node['Relation Name'] && TABLES.has(node['Relation Name']) && touched > budget) {
      problems.push(`${node['Node Type']} on ${node['Relation Name']} (${node['Index Name'] ?? ''}) reads ${touched} rows`);
    }
    if (node['Node Type'] === 'Sort') {
      const input = node.Plans?.[0];
      const sorted = input ? (input['Actual Rows'] ?? input['Plan Rows']) * (input['Actual Loops'] ?? 1) : 0;
      if (sorted > Math.max(budget, MAX_ROWS_TOUCHED)) problems.push(`Sort of ${sorted} rows`);
    }
  }
  return problems;
}

/** Events the search indexer has not reached in the seeded table. */
const SEARCH_TAIL = 200;

describe.each([PGLITE, POSTGRESQL])('query plans on $name', (backend) => {
  let client: SqlClient;
  let cleanup = async () => {};
  let available = true;

  beforeAll(async () => {
    const opened = await backend.open();
    if (!opened) {
      available = false;
      return;
    }
    ({ client, cleanup } = opened);
    await migrate(client, migrationsDir());
    // Building the trigram indexes once after the load is several times faster than updating
    // them row by row; they are rebuilt from their own definitions, so the schema is the real one.
    const gin = await client.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE tablename IN ('events', 'event_search') AND indexdef LIKE '%USING gin%'`,
    );
    expect(gin.map((index) => index.indexname).sort()).toEqual(['event_search_doc_trgm_idx', 'event_search_type_trgm_idx']);
    for (const index of gin) await client.exec(`DROP INDEX ${index.indexname}`);
    await client.exec(SEED_EVENTS);
    // The search indexer's work (store.indexSearchBatch), done in one go; the newest rows stay
    // unindexed, so searches also read a tail as they do while the indexer catches up.
    await client.exec(`INSERT INTO event_search (event_id, doc, event_type)
      SELECT id, switchboard_search_text(payload), event_type FROM events WHERE id <= ${ROWS - SEARCH_TAIL};
      UPDATE search_state SET indexed_id = ${ROWS - SEARCH_TAIL};`);
    for (const index of gin) await client.exec(index.indexdef);
    await client.exec('ANALYZE event_search;');
    await client.exec('ANALYZE events;');
  }, 120_000);
  afterAll(async () => {
    if (!available) return;
    await client.close();
    await cleanup();
  });

  /** EXPLAINs one statement the way the store runs it (its planner settings in a transaction). */
  async function explain(step: SqlStep, analyze = true): Promise<{ plan: PlanNode; rows: number }> {
    return client.transaction(async (tx) => {
      for (const setting of step.settings ?? []) await tx.exec(`SET LOCAL ${setting}`);
      const result = await tx.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (${analyze ? 'ANALYZE, ' : ''}FORMAT JSON) ${step.sql}`, step.params);
      const raw = result[0]!['QUERY PLAN'];
      const plan = ((typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: PlanNode }])[0].Plan;
      return { plan, rows: plan['Actual Rows'] ?? 0 };
    });
  }

  function expectIndexed(label: string, plan: PlanNode, budget?: number): void {
    expect(planProblems(plan, budget), `${label}\n${JSON.stringify(plan, null, 1).slice(0, 4000)}`).toEqual([]);
  }

  /**
   * Runs listEvents' statements as the store does (a search: its first window, then the index or
   * the walk's next window, as searchUsesIndex decides from the first) and checks each plan.
   */
  const searchPaths = new Set<'index' | 'walk'>();
  async function checkList(query: EventQuery): Promise<void> {
    const label = JSON.stringify(query);
    if (query.search === undefined) {
      expectIndexed(label, (await explain(eventListStep(query))).plan);
      return;
    }
    const rows = searchWindowRows(query.limit);
    const window = searchWindowStep(query, rows);
    const first = await explain(window);
    expectIndexed(`${label} first window`, first.plan, 5 * rows);
    const [stats] = await client.query<SearchWindowRow>(window.sql, window.params);
    const read = { scanned: Number(stats!.scanned), near: Number(stats!.near), total: Number(stats!.total), unindexed: Number(stats!.unindexed) };
    if (first.rows > query.limit || read.scanned < rows) return;
    if (searchUsesIndex(read)) {
      searchPaths.add('index');
      expectIndexed(`${label} index`, (await explain(searchIndexStep(query))).plan);
    } else {
      searchPaths.add('walk');
      const edge = { received_at: stats!.edge_received_at!, id: Number(stats!.edge_id) };
      expectIndexed(`${label} walk`, (await explain(searchWindowStep(query, SEARCH_WALK_MIN_ROWS, edge))).plan, 5 * SEARCH_WALK_MIN_ROWS);
      // Or, once the walk's estimate says so, the index for the events older than where it got.
      expectIndexed(`${label} index after a walk`, (await explain(searchIndexStep({ ...query, cursor: encodeCursor(edge) }))).plan);
    }
  }

  const middle = { received_at: '2026-01-01T05:33:20.000000Z', id: ROWS / 2 };
  const filters: Record<string, Partial<EventQuery>[]> = {
    provider: [{ provider: 'p1' }, { provider: 'rare' }, { provider: 'nobody' }],
    event_type: [{ event_type: 'type.3' }, { event_type: 'rare.type' }, { event_type: 'no.such.type' }],
    trust_mode: [{ trust_mode: 'signed' }, { trust_mode: 'token' }],
    origin: [{ origin: 'provider' }, { origin: 'test' }, { origin: 'import' }],
    external_id: [{ external_id: 'ext-1234' }, { external_id: 'absent' }],
    since: [{ since_time: '2026-01-01T10:50:00Z' }, { since_time: '2026-01-01T00:05:00Z' }, { after_id: ROWS - 100 }, { after_id: 10 }],
    until: [{ until_time: '2026-01-01T00:20:00Z' }, { until_time: '2026-01-01T10:00:00Z' }],
    cursor: [{ cursor: encodeCursor(middle) }],
    search: [{ search: 'delivered' }, { search: 'ZEBRACORN' }, { search: 'quuxfoo' }, { search: 'evt_12345' }, { search: 'for Ada order number' }, { search: 'ord '.repeat(250) }],
  };
  const kinds = Object.keys(filters);
  // Every filter alone and every pair of filters, each with its common, rare and absent values.
  const queries: EventQuery[] = [{ limit: 50 }];
  for (const [i, a] of kinds.entries()) {
    for (const va of filters[a]!) queries.push({ limit: 50, ...va });
    for (const b of kinds.slice(i + 1)) {
      for (const va of filters[a]!) for (const vb of filters[b]!) queries.push({ limit: 50, ...va, ...vb });
    }
  }

  it(`uses an index for every filter and every pair of filters (${queries.length} queries)`, async (context) => {
    if (!available) return context.skip();
    for (const query of queries) await checkList(query);
    // Rare and absent words went to the index, a phrase of words in every event walked.
    expect([...searchPaths].sort()).toEqual(['index', 'walk']);
  }, 300_000);

  it('lists drifted events (DESIGN §16) from event_shapes, events by primary key, with filters and a cursor', async (context) => {
    if (!available) return context.skip();
    await client.exec(`INSERT INTO event_shapes (event_id, provider, event_type, received_at, drift)
      SELECT events.id, events.provider, events.event_type, events.received_at, '[{"path":"x","change":"added"}]'::jsonb FROM events WHERE events.id % 997 = 0
      ON CONFLICT DO NOTHING; ANALYZE event_shapes`);
    for (const query of [{ limit: 50, drift: true }, { limit: 50, drift: true, provider: 'p1' }, { limit: 20, drift: true, cursor: encodeCursor(middle) }, { limit: 50, drift: true, event_type: 'type.3', since_time: '2026-01-01T00:05:00Z' }]) {
      const { plan } = await explain(eventListStep(query));
      // Driven by event_shapes (its partial index, or a scan of it while it is this small), events read by primary key.
      expectIndexed(JSON.stringify(query), plan);
      expect([...nodes(plan)].some((node) => node['Relation Name'] === 'event_shapes'), JSON.stringify(plan).slice(0, 2000)).toBe(true);
    }
    const rows = await client.query<{ id: number; drift: boolean }>(eventListStep({ limit: 5, drift: true }).sql, eventListStep({ limit: 5, drift: true }).params);
    expect(rows.every((row) => row.drift === true)).toBe(true);
    expect(rows.length).toBe(6); // limit + 1: the page and whether there is more
  });

  it('pages by cursor, and with every filter at once, through an index', async (context) => {
    if (!available) return context.skip();
    await checkList({ limit: 200, cursor: encodeCursor({ received_at: '2026-01-01T11:06:39.000000Z', id: ROWS - 1 }) });
    await checkList({
      limit: 50,
      provider: 'p1',
      event_type: 'type.5',
      trust_mode: 'signed',
      origin: 'provider',
      since_time: '2026-01-01T00:00:00Z',
      until_time: '2026-01-02T00:00:00Z',
      search: 'delivered',
      cursor: encodeCursor(middle),
    });
  });

  it('finds the first event after an id (MCP wait) through the primary key or a filter index', async (context) => {
    if (!available) return context.skip();
    for (const query of [
      { after_id: ROWS - 10 },
      { after_id: ROWS - 10, provider: 'rare' },
      { after_id: 0, provider: 'rare' },
      { after_id: 0, event_type: 'rare.type' },
      { after_id: 100, provider: 'p2', event_type: 'type.6' },
    ]) {
      expectIndexed(JSON.stringify(query), (await explain(firstEventAfterStep(query))).plan);
    }
  });

  it('reads the stored keys for the journal redelivery filter in primary-key steps', async (context) => {
    if (!available) return context.skip();
    for (const after of [0, ROWS / 2, ROWS - 10]) {
      expectIndexed(`keys after ${after}`, (await explain(eventKeysAfterStep(after, 500))).plan);
    }
  });

  it('looks up redelivered keys for the journal through the (provider, external_id) index', async (context) => {
    if (!available) return context.skip();
    for (const ids of [['ext-8'], Array.from({ length: 500 }, (_, i) => `ext-${i * 71 + 4}`)]) {
      const { plan, rows } = await explain(eventsByKeysStep('p0', ids));
      expectIndexed(`${ids.length} keys`, plan, ids.length * 2);
      expect(rows).toBe(ids.filter((id) => Number(id.slice(4)) % 4 === 0 && Number(id.slice(4)) % 100 !== 0).length);
    }
  });

  it('lists rejections and replays through their indexes', async (context) => {
    if (!available) return context.skip();
    for (const query of [{ limit: 100 }, { limit: 100, provider: 'p2' }, { limit: 100, provider: 'rare' }, { limit: 100, cursor: encodeCursor(middle) }]) {
      expectIndexed(JSON.stringify(query), (await explain(rejectionListStep(query))).plan);
    }
    expectIndexed('replays', (await explain(replayListStep(42, 100))).plan);
  });

  it('checks that a provider filter names a stored provider (MCP) through the provider indexes', async (context) => {
    if (!available) return context.skip();
    for (const provider of ['rare', 'p2', 'never-seen']) {
      expectIndexed(provider, (await explain(providerSeenStep(provider))).plan);
    }
  });

  /** Runs `fn` with the search index's backfill floor at `floor`, then undoes everything it did. */
  async function withBackfillFloor(floor: { received_at: string; id: number }, fn: (tx: SqlClient) => Promise<void>): Promise<void> {
    const undo = new Error('undo');
    await client
      .transaction(async (tx) => {
        await tx.query('UPDATE search_state SET floor_received_at = $1, floor_id = $2, backfill_rows = $2', [floor.received_at, floor.id]);
        await fn(tx);
        throw undo;
      })
      .catch((error: unknown) => {
        if (error !== undo) throw error;
      });
  }

  it('backfills the search index newest first through the (received_at, id) index, and searches the part it covers through the index', async (context) => {
    if (!available) return context.skip();
    await withBackfillFloor(middle, async (tx) => {
      // The backfill's statement as the indexer sends it: EXPLAIN ANALYZE runs it, the undo takes it back.
      const captured: SqlStep[] = [];
      const recorder = { ...tx, query: async (sql: string, params?: readonly unknown[]) => (captured.push({ sql, params: [...(params ?? [])] }), []) } as unknown as SqlClient;
      await backfillSearchBatch(recorder, 40);
      await indexSearchBatch(recorder, 40);
      for (const step of captured) {
        const result = await tx.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${step.sql}`, step.params);
        const raw = result[0]!['QUERY PLAN'];
        const plan = ((typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: PlanNode }])[0].Plan;
        expectIndexed(step.sql.slice(0, 120), plan, 400);
      }
    });
    // The index step of a search while the backfill stands at the middle: the part at or above it.
    for (const search of ['zebracorn', 'quuxfoo', 'evt_12345']) {
      const { plan } = await explain(searchIndexStep({ limit: 50, search, cursor: encodeCursor({ received_at: '2026-01-01T11:06:39.000000Z', id: ROWS - 1 }) }, middle));
      expectIndexed(`${search} above the floor`, plan);
    }
  });

  it('finds the retention cut-off and deletes in index-bounded batches', async (context) => {
    if (!available) return context.skip();
    expectIndexed('cut-off', (await explain(nthNewestStep(ROWS / 40, null))).plan);
    expectIndexed('cut-off step', (await explain(nthNewestStep(ROWS / 40, middle))).plan);
    // A batch is a small part of the table here as at scale (5,000 of 1M); EXPLAIN without
    // ANALYZE so nothing is deleted.
    const sql = retentionStatements(ROWS / 100);
    const params = { eventsByAge: [30 * 86_400], eventsUpTo: [middle.received_at, middle.id], rejectionsByAge: [30 * 86_400], rejectionsUpToId: [ROWS / 4] };
    for (const [name, statement] of Object.entries(sql)) {
      expectIndexed(name, (await explain({ sql: statement, params: params[name as keyof typeof params] }, false)).plan);
    }
  });
});
