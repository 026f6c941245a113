import { sign } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';

// The search indexer copies search text in the receiver's idle time (src/core/store/search-indexer.ts):
// a statement of it holds the embedded database for tens of ms, so while deliveries keep coming
// it waits — redeliveries included, which are answered without storing anything.

const SECRET = 'indexer-test-secret-0123456789';

describe('the search indexer', () => {
  let t: TestSwitchboard;

  beforeAll(async () => {
    t = await startTestSwitchboard({ providers: [{ name: 'github', kind: 'github', secrets: [{ env: 'GH_SECRET' }] }] }, { env: { GH_SECRET: SECRET } });
  }, 60_000);
  afterAll(() => t?.close());

  const deliver = async (id: string) => {
    const body = JSON.stringify({ zen: 'Design for failure.', id });
    const response = await fetch(`${t.sb.url.receiver}/webhooks/github`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-github-event': 'ping', 'x-github-delivery': id, 'x-hub-signature-256': await sign(SECRET, body) },
    });
    return (await response.json()) as { id: number; duplicate: boolean };
  };

  it('waits while redeliveries keep arriving, and catches up once they stop', async () => {
    // Five of its batches' worth: a stall of this machine may let one batch run, not all of them.
    const EVENTS = 1_000;
    let newest = 0;
    for (let i = 0; i < EVENTS; i++) newest = (await deliver(`indexer-${i}`)).id;
    await t.sb.store.getEvent(newest); // applied
    const indexer = t.sb.searchIndexer!;
    const until = Date.now() + 1_500;
    let redeliveries = 0;
    while (Date.now() < until) {
      expect((await deliver(`indexer-${redeliveries % EVENTS}`)).duplicate).toBe(true);
      redeliveries++;
    }
    expect(redeliveries).toBeGreaterThan(20);
    expect(indexer.indexedThrough).toBeLessThan(newest);
    await expect.poll(() => indexer.indexedThrough, { timeout: 15_000 }).toBe(newest);
  }, 60_000);
});
