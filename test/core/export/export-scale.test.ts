import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../../helpers/core.js';
import { newEvent } from '../../helpers/events.js';

/**
 * 100k events exported with a bounded footprint: the export is several times larger than the
 * memory it may grow by, and a client that stops reading stalls the export instead of
 * buffering it (backpressure), so RSS stays flat while it waits.
 */

const EVENTS = 100_000;
const PAYLOAD = Buffer.from(JSON.stringify({ type: 'load', data: 'x'.repeat(1900) }));
// Generous for a shared CI machine (the in-process database's WASM heap grows too); the export is
// still more than twice this, so holding it whole could not pass.
const MAX_GROWTH_BYTES = 192 * 1024 * 1024;

let t: TestSwitchboard;
beforeAll(async () => {
  t = await startTestSwitchboard({});
  // Recent times: retention (30 days by default) must not trim them while the test runs.
  const receivedAt = Date.now() - EVENTS * 10;
  for (let start = 0; start < EVENTS; start += 1_000) {
    const batch = Array.from({ length: 1_000 }, (_, i) => ({
      ...newEvent({ provider: 'load', external_id: `e-${start + i}`, payload: PAYLOAD }),
      received_at: new Date(receivedAt + (start + i) * 10).toISOString(),
    }));
    await t.sb.store.importEvents(batch);
  }
  // The search indexer copies the new events' text in the background; finished here, so the
  // memory measured below is the export's.
  await t.sb.searchIndexer!.catchUp();
}, 300_000);
afterAll(() => t?.close());

describe('export at scale', () => {
  it(`streams ${EVENTS} events with bounded memory, and waits for a slow reader`, async () => {
    global.gc?.();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sample = () => (peak = Math.max(peak, process.memoryUsage().rss));
    const url = new URL(`${t.sb.url.control}/api/export?format=ndjson`);
    let bytes = 0;
    let lines = 0;
    let tail = '';
    await new Promise<void>((resolve, reject) => {
      const req = request(url, { headers: { authorization: `Bearer ${TEST_TOKEN}` } }, (res) => {
        expect(res.statusCode).toBe(200);
        res.pause();
        // Not reading for a while: with backpressure the server stops after the socket buffers fill.
        setTimeout(() => {
          sample();
          const stalled = bytes;
          expect(stalled).toBe(0);
          res.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
            tail = (tail + chunk.toString('latin1')).slice(-16_384);
            if (lines % 5_000 === 0) sample();
          });
          res.on('end', resolve);
          res.resume();
        }, 1_500);
      });
      req.on('error', reject);
      req.end();
    });
    sample();
    expect(lines).toBe(EVENTS);
    expect(JSON.parse(tail.trimEnd().split('\n').at(-1)!).external_id).toBe(`e-${EVENTS - 1}`);
    // The export is far larger than the growth allowed: it was never held whole.
    expect(bytes).toBeGreaterThan(2 * MAX_GROWTH_BYTES);
    expect(peak - baseline).toBeLessThan(MAX_GROWTH_BYTES);
  }, 300_000);
});
