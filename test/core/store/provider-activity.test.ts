import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsDir } from '../../../src/core/paths.js';
import { migrate } from '../../../src/core/store/migrations.js';
import { ACTIVITY_COUNT_CAP, logTotalsStep, providerActivityStep, readActivity } from '../../../src/core/store/provider-activity.js';
import { readSearchSnippets, searchSnippetStep } from '../../../src/core/store/search-snippets.js';
import { openPglite, type SqlClient } from '../../../src/core/store/sql-client.js';

/**
 * The Providers screen's activity and the Events footer's estimate (issue #26.8/9), and search
 * snippets, on a real PGlite holding 120,000 events: right answers, and plans that never read
 * the table — no Seq Scan, at most ACTIVITY_COUNT_CAP index rows per provider and table.
 */

const ROWS = 120_000;
const PROVIDERS = ['p0', 'p1', 'p2', 'rare', 'silent'];

// p0..p2 share almost every row; 'rare' has 12 events, 'silent' none. Rejections likewise.
const SEED = `
INSERT INTO events (provider, family, event_type, external_id, trust_mode, verified, payload, payload_size, origin, received_at)
SELECT CASE WHEN g % 10000 = 5 THEN 'rare' ELSE 'p' || (g % 3) END, 'webhook', 'type.' || (g % 40), 'ext-' || g, 'signed', true,
       p.payload, octet_length(p.payload), 'provider', timestamptz '2026-01-01T00:00:00Z' + g * interval '1 second'
FROM generate_series(1, ${ROWS}) AS g,
     LATERAL (SELECT convert_to('{"id":"evt_' || g || '","description":"Order number ' || g || ' for Ada"}', 'UTF8') AS payload) AS p;
INSERT INTO rejections (provider, reason, hint, body_size, body_sha256, received_at)
SELECT CASE WHEN g % 10000 = 7 THEN 'rare' ELSE 'p' || (g % 3) END, 'signature_mismatch', 'wrong secret', 10, 'x',
       timestamptz '2026-01-01T00:00:00Z' + g * interval '1 second'
FROM generate_series(1, ${ROWS / 2}) AS g;
ANALYZE events; ANALYZE rejections;
`;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

function* nodes(node: PlanNode): Generator<PlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* nodes(child);
}

let db: SqlClient;

async function explain(step: { sql: string; params: unknown[] }): Promise<PlanNode> {
  const [row] = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${step.sql}`, step.params);
  const raw = row!['QUERY PLAN'];
  return ((typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: PlanNode }])[0].Plan;
}

/** Rows each table-reading node touched, summed over its loops. */
function touched(plan: PlanNode): { seqScans: string[]; rows: Record<string, number> } {
  const seqScans: string[] = [];
  const rows: Record<string, number> = {};
  for (const node of nodes(plan)) {
    const relation = node['Relation Name'];
    if (!relation) continue;
    if (node['Node Type'] === 'Seq Scan') seqScans.push(relation);
    rows[relation] = (rows[relation] ?? 0) + (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1) + (node['Rows Removed by Filter'] ?? 0);
  }
  return { seqScans, rows };
}

describe('provider activity and search snippets at scale', () => {
  beforeAll(async () => {
    db = await openPglite('memory://');
    await migrate(db, migrationsDir());
    await db.exec(SEED);
  }, 180_000);
  afterAll(async () => {
    await db?.close();
  });

  it('answers last delivery, bounded counts and the estimate', async () => {
    const activity = await readActivity(db, PROVIDERS);
    const byName = new Map(activity.providers.map((row) => [row.provider, row]));
    expect(byName.get('p0')).toMatchObject({ events: ACTIVITY_COUNT_CAP, rejections: ACTIVITY_COUNT_CAP });
    expect(byName.get('rare')).toMatchObject({ events: 12, rejections: 6, last_event_at: '2026-01-02T06:33:25.000000Z', last_rejection_at: '2026-01-01T13:53:27.000000Z' });
    expect(byName.get('silent')).toEqual({ provider: 'silent', events: 0, rejections: 0, last_event_at: null, last_rejection_at: null });
    expect(activity.rejections).toBe(ACTIVITY_COUNT_CAP);
    expect(activity.events_estimate).toBe(ROWS);
    // The estimate follows deletes of the oldest rows (retention), without counting.
    await db.exec('DELETE FROM events WHERE id <= 100');
    expect((await readActivity(db, PROVIDERS)).events_estimate).toBe(ROWS - 100);
  });

  it('reads at most the cap per provider and table through the indexes', async () => {
    for (const step of [providerActivityStep(PROVIDERS), logTotalsStep()]) {
      const plan = await explain(step);
      const { seqScans, rows } = touched(plan);
      expect(seqScans, JSON.stringify(plan)).toEqual([]);
      for (const [table, count] of Object.entries(rows)) expect(count, `${table}: ${JSON.stringify(plan)}`).toBeLessThanOrEqual(ACTIVITY_COUNT_CAP * PROVIDERS.length * 2 + 10);
    }
  });

  it('cuts an excerpt around the match, for the page only, through the primary key', async () => {
    const ids = [500, 501, 502];
    const plan = await explain(searchSnippetStep(ids, 'ORDER NUMBER 501 '));
    const { seqScans, rows } = touched(plan);
    expect(seqScans).toEqual([]);
    expect(rows.events).toBeLessThanOrEqual(ids.length);
    const snippets = await readSearchSnippets(db, ids, 'ORDER NUMBER 501 ');
    expect([...snippets.keys()]).toEqual([501]);
    expect(snippets.get(501)).toBe('{"id":"evt_501","description":"Order number 501 for Ada"}');

    // A long payload: the excerpt is cut on both sides, never mid-character.
    const long = `${'é'.repeat(200)} the needle-word sits here ${'ü'.repeat(200)}`;
    const [row] = await db.query<{ id: number }>(
      `INSERT INTO events (provider, family, trust_mode, verified, payload, payload_size, received_at) VALUES ('p0', 'webhook', 'open', false, $1, $2, now()) RETURNING id`,
      [Buffer.from(long), Buffer.byteLength(long)],
    );
    const excerpt = (await readSearchSnippets(db, [Number(row!.id)], 'Needle-Word')).get(Number(row!.id))!;
    expect(excerpt).toMatch(/^…é+ the needle-word sits here ü+…$/);
    expect(excerpt).not.toContain('\uFFFD');
    expect(excerpt.length).toBeLessThan(140);
  });
});
