import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../../../src/core/config.js';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { createTestDatabase } from '../../helpers/postgres.js';
import { startHandler, STRIPE_SECRET, stripeDelivery, type Handler } from './handler.js';

/**
 * Suites on a real PostgreSQL server (team mode): the same migration and the same statements as
 * on the embedded database — saved, run twice (new, then pass), exported and imported, 20 runs
 * kept — and a run cut short by a stop ends `interrupted`, with what it got kept.
 */

const CONFIG = { providers: [{ name: 'stripe', kind: 'stripe', secrets: [{ env: 'STRIPE_SECRET' }] }], replay: { timeout_ms: 20_000 } } satisfies ConfigInput;

const database = await createTestDatabase();
let t: TestSwitchboard;
let handler: Handler;

async function run(name: string, target?: string) {
  const { run: started } = await t.sb.api.runSuite({ name, ...(target ? { target_url: target } : {}) });
  for (;;) {
    const current = await t.sb.api.getSuiteRun({ id: started.id, diffs: true });
    if (current.run.status !== 'running') return current;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.runIf(database)('suites on PostgreSQL', () => {
  beforeAll(async () => {
    [t, handler] = await Promise.all([startTestSwitchboard(CONFIG, { databaseUrl: database!.url, env: { STRIPE_SECRET } }), startHandler()]);
    for (let i = 0; i < 3; i++) {
      const { body, headers } = stripeDelivery('invoice.paid', 100 * (i + 1));
      expect((await t.deliver('/webhooks/stripe', body, headers)).status).toBe(200);
    }
  });
  afterAll(async () => {
    await handler?.close();
    await t?.close();
    await database?.drop();
  });

  it('saves, runs (new, then pass), exports and imports', async () => {
    expect((await t.sb.api.saveSuite({ name: 'pg', filter: { provider: 'stripe' } })).suite.cases).toBe(3);
    expect((await run('pg', handler.url('/stripe'))).run).toMatchObject({ new: 3, accepted: true, learned_ignores: expect.arrayContaining(['$.ts']) });
    const second = await run('pg');
    expect(second.run).toMatchObject({ pass: 3 });
    const { ndjson } = await t.sb.api.exportSuite({ name: 'pg' });
    await t.sb.api.importSuite({ ndjson, replace: true });
    expect((await t.sb.api.exportSuite({ name: 'pg' })).ndjson).toBe(ndjson);
    expect((await run('pg')).run).toMatchObject({ pass: 3 });
  });

  it('keeps the 20 latest runs', async () => {
    for (let i = 0; i < 19; i++) await run('pg');
    const { runs } = await t.sb.api.listSuiteRuns({ name: 'pg' });
    expect(runs).toHaveLength(20);
  });

  it('a run cut short by a stop ends interrupted, keeping what it got', async () => {
    handler.behaviour.hangOn.add('invoice.paid');
    const { run: started } = await t.sb.api.runSuite({ name: 'pg' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await t.sb.stop();
    await t.sb.start();
    const { run: stopped } = await t.sb.api.getSuiteRun({ id: started.id });
    expect(stopped).toMatchObject({ status: 'interrupted', failed: 1 });
    expect((await t.sb.api.getSuiteRun({ id: started.id })).cases[0]).toMatchObject({ verdict: 'failed', reason: expect.stringMatching(/switchboard is stopping/) });
  });
});
