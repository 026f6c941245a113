import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventQuery, ImportedEvent } from '../../../src/core/store/types.js';
import { startTestSwitchboard, TEST_TOKEN, withDeadline, type TestSwitchboard } from '../../helpers/core.js';
import { connectMcp, type McpTestClient } from '../../helpers/mcp.js';

// Issue #22 item 1, a release blocker: three concurrent searches that used the trigram index
// deadlocked the embedded database in its worker thread for good. A search's index step ran in a
// transaction (SET LOCAL planner settings); a second `begin` queued in the worker waited on
// PGlite's transaction lock while the first transaction's statements were queued behind it, and
// from then on every read hung with the CPU idle. No read may wait on another read's transaction.
// Here: the database in its worker thread (as `serve` and the desktop run it), many searches of
// every kind at once, with plain reads and deliveries meanwhile.

const EVENTS = 6_000;
const RARE = 'zyxwvut';
// Received over the last EVENTS seconds: older than retention's 30 days, they would be deleted.
const FIRST_AT = Date.now() - (EVENTS + 60) * 1000;

const event = (i: number): ImportedEvent => ({
  provider: 'dev',
  family: 'webhook',
  event_type: i % 2 ? 'order.created' : 'order.paid',
  external_id: `concurrent-${i}`,
  trust_mode: 'open',
  verified: false,
  verify_detail: null,
  content_type: 'application/json',
  headers: { 'content-type': 'application/json' },
  payload: Buffer.from(JSON.stringify({ order: i, note: i % 1500 === 7 ? `the ${RARE} order` : 'pending order for a customer', sku: `sku-${i}` })),
  source_ip: null,
  received_at: new Date(FIRST_AT + i * 1000).toISOString(),
});

describe('concurrent reads on the embedded database in its worker thread', () => {
  let t: TestSwitchboard;
  let mcp: McpTestClient;

  beforeAll(async () => {
    t = await startTestSwitchboard({ providers: [{ name: 'dev', kind: 'open' }] }, { databaseUrl: undefined, databaseInWorker: true });
    for (let start = 0; start < EVENTS; start += 1_000) {
      await t.sb.store.importEvents(Array.from({ length: 1_000 }, (_, i) => event(start + i)));
    }
    await t.sb.searchIndexer!.catchUp();
    mcp = await connectMcp(t);
  }, 120_000);
  afterAll(async () => {
    await mcp?.close();
    await t?.close();
  });

  it('answers many searches of every kind at once, with reads and deliveries meanwhile', async () => {
    const list = (query: Partial<EventQuery>) => t.sb.store.listEvents({ limit: 50, ...query });
    const api = async (method: string, input: unknown) => {
      const response = await fetch(`${t.sb.url.control}/api/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_TOKEN}` },
        body: JSON.stringify(input),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as { events: unknown[] };
    };
    const work: Promise<unknown>[] = [];
    for (let round = 0; round < 4; round++) {
      // The index (a rare word, an absent one, an id), the first window (a common word), the walk.
      for (const search of [RARE, 'absentword', 'sku-4242', 'pending', 'order for']) {
        work.push(list({ search }), list({ search, provider: 'dev' }), list({ search, event_type: 'order.paid' }));
        work.push(api('listEvents', { search, limit: 20 }));
        work.push(mcp.ok('list_webhook_events', { search, limit: 10 }));
      }
      work.push(list({}), list({ event_type: 'order.created' }), t.sb.store.getEvent(1 + round), api('listEvents', {}));
      work.push(t.deliver('/webhooks/dev', JSON.stringify({ round, note: `${RARE} live` }), { 'content-type': 'application/json' }));
    }
    await withDeadline(Promise.all(work), 'a read');

    // A loaded machine may make a search run out of its time budget: it then says where it got
    // to, and going on from there finds the rest (as the UI, the CLI and an agent do).
    const found: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await withDeadline(list({ search: RARE, ...(cursor ? { cursor } : {}) }), 'the search after');
      found.push(...page.items.map((event) => event.id));
      cursor = page.searched_back_to ? page.next_cursor : undefined;
    } while (cursor);
    expect(found.length).toBe(4 + EVENTS / 1500);
  }, 120_000);

  it('keeps serving when index searches and plain reads are sent at the same moment, again and again', async () => {
    for (let i = 0; i < 20; i++) {
      await withDeadline(
        Promise.all([
          t.sb.store.listEvents({ limit: 5, search: RARE }),
          t.sb.store.listEvents({ limit: 5, search: 'sku-17' }),
          t.sb.store.latestEventId(),
          t.sb.store.listEvents({ limit: 5, search: 'absentword' }),
        ]),
        `round ${i}`,
      );
    }
  }, 120_000);
});
