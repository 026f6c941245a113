// Store benchmark (`npm run bench -- store`): what search indexing costs per insert,
// how fast list and search queries answer on N stored events (BENCH_STORE_N, default 1,000,000),
// and ingest latency while retention removes half of them in batches. Embedded PGlite in memory;
// numbers are only comparable within one run on one machine.
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const N = Number(process.env.BENCH_STORE_N ?? 1_000_000);
const INSERTS = Number(process.env.BENCH_STORE_INSERTS ?? 20_000);
const RUNS = 5;

const core = (path) => import(join(root, 'dist', 'core', path));
/** The search indexer's step (store/search-indexer.js), loaded with the store. */
let indexSearchBatch;

async function openStore() {
  const { openPglite } = await core('store/sql-client.js');
  const { migrate } = await core('store/migrations.js');
  const { EventStore } = await core('store/event-store.js');
  ({ indexSearchBatch } = await core('store/search-indexer.js'));
  const client = await openPglite('memory://');
  await migrate(client, join(root, 'migrations'));
  return { client, store: new EventStore(client) };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))];
const ms = (value) => `${value.toFixed(1)} ms`;

function deliveryBody(i) {
  // ~1.2 KB, shaped like a provider's event.
  return JSON.stringify({
    id: `evt_${i}`,
    object: 'event',
    type: `type.${i % 40}`,
    data: { object: { id: `obj_${i}`, customer: `cus_${i % 997}`, status: 'delivered', amount: (i * 7) % 100_000, currency: 'eur' } },
    description: `Order number ${i} for Ada Lovelace`,
    pad: 'lorem ipsum dolor sit amet '.repeat(38),
  });
}

/** Delivery `i` as the store takes it: ~1.2 KB, 5 providers, 40 types. */
function benchEvent(i) {
  return {
    provider: `p${i % 5}`,
    family: 'webhook',
    event_type: `type.${i % 40}`,
    external_id: `evt_${i}`,
    trust_mode: 'signed',
    verified: true,
    verify_detail: null,
    content_type: 'application/json',
    headers: { 'content-type': 'application/json' },
    payload: Buffer.from(deliveryBody(i)),
    source_ip: '127.0.0.1',
  };
}

/** Rows/s through the store's group commit (bursts of 256, as concurrent deliveries arrive). */
async function insertRate(store, count) {
  const started = performance.now();
  for (let done = 0; done < count; done += 256) {
    await Promise.all(Array.from({ length: Math.min(256, count - done) }, (_, k) => store.insertEvent(benchEvent(done + k))));
  }
  return count / ((performance.now() - started) / 1000);
}

/** Rows/s through the journal's applier: batches of `batch` with ids given, no search indexing. */
async function applyRate(store, count, batch = 500) {
  const started = performance.now();
  for (let done = 0; done < count; done += batch) {
    const events = Array.from({ length: Math.min(batch, count - done) }, (_, k) => ({
      ...benchEvent(done + k),
      id: done + k + 1,
      received_at: new Date(Date.UTC(2026, 0, 1) + done + k).toISOString().replace('Z', '000Z'),
      origin: 'provider',
    }));
    await store.journalSide.applyJournalBatch(events, events.at(-1).id);
  }
  return count / ((performance.now() - started) / 1000);
}

async function benchInsertCost() {
  console.log(`\nstore: what search indexing costs a write (${INSERTS} deliveries of ~1.2 KB)`);
  const synchronous = await openStore();
  const rateWith = await insertRate(synchronous.store, INSERTS);
  await synchronous.store.close();
  const journal = await openStore();
  const rateApply = await applyRate(journal.store, INSERTS);
  const indexStarted = performance.now();
  let indexed = 0;
  for (;;) {
    const step = await indexSearchBatch(journal.client);
    indexed += step.indexed;
    if (step.indexed === 0) break;
  }
  const rateIndex = indexed / ((performance.now() - indexStarted) / 1000);
  await journal.store.close();
  console.log(`  group commit, search text indexed in the insert (0.2; PostgreSQL)   ${rateWith.toFixed(0)} rows/s (bursts of 256)`);
  console.log(`  journal applier, search indexed later (embedded)                   ${rateApply.toFixed(0)} rows/s (batches of 500)`);
  console.log(`  search indexer catching up afterwards                              ${rateIndex.toFixed(0)} rows/s (its own batches)`);
}

async function seed(client, n) {
  const started = performance.now();
  const gin = await client.query(`SELECT indexname, indexdef FROM pg_indexes WHERE tablename IN ('events', 'event_search') AND indexdef LIKE '%USING gin%'`);
  for (const index of gin) await client.exec(`DROP INDEX ${index.indexname}`);
  for (let from = 1; from <= n; from += 100_000) {
    const to = Math.min(n, from + 99_999);
    await client.exec(`
      INSERT INTO events (provider, family, event_type, external_id, trust_mode, verified, payload, payload_size, received_at)
      SELECT 'p' || (g % 5), 'webhook', 'type.' || (g % 40), 'evt_' || g, 'signed', true, p.payload, octet_length(p.payload),
             now() - interval '10 days' + g * interval '1 millisecond' * (864000000 / ${n})
      FROM generate_series(${from}, ${to}) AS g,
           LATERAL (SELECT convert_to('{"id":"evt_' || g || '","object":"event","type":"type.' || (g % 40)
             || '","data":{"object":{"id":"obj_' || g || '","customer":"cus_' || (g % 997) || '","status":"'
             || CASE WHEN g % 100000 = 77 THEN 'zebracorn' ELSE 'delivered' END || '","amount":' || (g * 7 % 100000)
             || ',"currency":"eur"}},"description":"Order number ' || g || ' for Ada Lovelace","pad":"'
             || repeat('lorem ipsum dolor sit amet ', 38) || '"}', 'UTF8') AS payload) AS p`);
  }
  const loaded = performance.now();
  // What the search indexer does in the background (store.indexSearchBatch), in one statement.
  await client.exec(`INSERT INTO event_search (event_id, doc, event_type)
    SELECT id, lower(encode(substring(payload from 1 for 65536), 'escape')), event_type FROM events;
    UPDATE search_state SET indexed_id = (SELECT max(id) FROM events);`);
  for (const index of gin) await client.exec(index.indexdef);
  await client.exec('ANALYZE events; ANALYZE event_search;');
  console.log(`  seeded ${n} events in ${((loaded - started) / 1000).toFixed(1)} s, search text copied and trigram indexes built in ${((performance.now() - loaded) / 1000).toFixed(1)} s`);
}

async function timeQuery(label, run) {
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  console.log(`  ${label.padEnd(36)} median ${ms(median(times))}  (max ${ms(Math.max(...times))})`);
}

/**
 * Ingest latency while retention trims the table to `maxRows`: single deliveries at `ratePerS`
 * through the store, each timed from request to commit. Exported for the scale benchmark.
 */
export async function measureRetentionUnderIngest(store, { maxRows, ratePerS = 200 }) {
  const latencies = [];
  let running = true;
  const started = performance.now();
  const retention = store.applyRetention({ max_age_days: 3650, max_rows: maxRows, max_rejections: 50_000 }).finally(() => (running = false));
  let i = 0;
  const inflight = [];
  while (running) {
    const sent = performance.now();
    inflight.push(
      store
        .insertEvent({
          provider: 'live',
          family: 'webhook',
          event_type: 'ping',
          external_id: `live_${i++}`,
          trust_mode: 'signed',
          verified: true,
          verify_detail: null,
          content_type: 'application/json',
          headers: {},
          payload: Buffer.from(deliveryBody(i)),
          source_ip: null,
        })
        .then(() => latencies.push(performance.now() - sent)),
    );
    await new Promise((resolve) => setTimeout(resolve, 1000 / ratePerS));
  }
  await Promise.all(inflight);
  const deleted = await retention;
  return {
    deleted: deleted.events,
    seconds: (performance.now() - started) / 1000,
    deliveries: latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: Math.max(...latencies),
  };
}

async function benchQueries() {
  console.log(`\nstore: queries on ${N} events`);
  const { client, store } = await openStore();
  await seed(client, N);
  const first = await store.listEvents({ limit: 50 });
  await timeQuery('newest 50', () => store.listEvents({ limit: 50 }));
  await timeQuery('page 2 by cursor', () => store.listEvents({ limit: 50, cursor: first.next_cursor }));
  await timeQuery('provider filter', () => store.listEvents({ limit: 50, provider: 'p2' }));
  await timeQuery('external_id', () => store.listEvents({ limit: 50, external_id: `evt_${Math.floor(N / 2)}` }));
  await timeQuery('search common word ("delivered")', () => store.listEvents({ limit: 50, search: 'delivered' }));
  await timeQuery('search rare word ("ZEBRACORN")', () => store.listEvents({ limit: 50, search: 'ZEBRACORN' }));
  await timeQuery('search absent word ("quuxfoo")', () => store.listEvents({ limit: 50, search: 'quuxfoo' }));
  await timeQuery('search an id ("evt_123457")', () => store.listEvents({ limit: 50, search: 'evt_123457' }));
  await timeQuery('search + provider ("zebracorn", p2)', () => store.listEvents({ limit: 50, search: 'zebracorn', provider: 'p2' }));

  console.log(`\nstore: retention removes ${N - Math.floor(N / 2)} events while deliveries arrive at 200/s`);
  const result = await measureRetentionUnderIngest(store, { maxRows: Math.floor(N / 2) });
  console.log(
    `  deleted ${result.deleted} in ${result.seconds.toFixed(1)} s; ${result.deliveries} deliveries: p50 ${ms(result.p50)}, p99 ${ms(result.p99)}, max ${ms(result.max)}`,
  );
  await store.close();
}

export async function benchStore() {
  await benchInsertCost();
  await benchQueries();
}
