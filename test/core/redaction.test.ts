import { sign } from '@octokit/webhooks-methods';
import pg from 'pg';
import Stripe from 'stripe';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/postgres.js';
import { startTestSwitchboard, type TestSwitchboard } from '../helpers/core.js';

const SECRETS = {
  GH: 'gh-secret-value-5f1e2d3c4b5a6978',
  STRIPE: 'whsec_stripe_secret_value_a1b2c3d4e5',
  TOKEN: 'shared-token-value-99aa88bb77cc',
};
const stripe = new Stripe('sk_test_unused');

let t: TestSwitchboard | undefined;
let db: Awaited<ReturnType<typeof createTestDatabase>>;

beforeAll(async () => {
  // Real PostgreSQL, so the test can read every table with its own connection.
  db = await createTestDatabase();
  if (!db) return;
  t = await startTestSwitchboard(
    {
      providers: [
        { name: 'github', kind: 'github', secrets: [{ env: 'GH' }] },
        { name: 'stripe', kind: 'stripe', secrets: [{ env: 'STRIPE' }] },
        { name: 'hook', kind: 'token', secrets: [{ env: 'TOKEN' }] },
        { name: 'open', kind: 'open' },
      ],
    },
    { env: SECRETS, databaseUrl: db.url },
  );
});
afterAll(async () => {
  await t?.close();
  await db?.drop();
});

it('keeps every secret, token and signature out of the database and the logs', async (context) => {
  if (!t || !db) return context.skip();
  const body = '{"action":"opened"}';
  const githubSignature = await sign(SECRETS.GH, body);
  const stripeHeader = stripe.webhooks.generateTestHeaderString({ payload: '{"id":"evt_1","type":"x"}', secret: SECRETS.STRIPE });
  const leaks = [
    ...Object.values(SECRETS),
    githubSignature.slice('sha256='.length),
    /v1=([0-9a-f]+)/.exec(stripeHeader)![1]!,
    'session-cookie-value-123',
    'api-token-value-456',
  ];
  const answers = [
    await t.deliver('/webhooks/github', body, { 'x-github-event': 'issues', 'x-hub-signature-256': githubSignature, cookie: 'sid=session-cookie-value-123' }),
    await t.deliver('/webhooks/github', '{"tampered":1}', { 'x-hub-signature-256': githubSignature }),
    await t.deliver('/webhooks/stripe', '{"id":"evt_1","type":"x"}', { 'stripe-signature': stripeHeader }),
    await t.deliver('/webhooks/hook', '{}', { authorization: `Bearer ${SECRETS.TOKEN}` }),
    await t.deliver(`/webhooks/hook?token=${SECRETS.TOKEN}`, '{}'),
    await t.deliver('/webhooks/hook', '{}', { 'x-switchboard-token': SECRETS.TOKEN, 'x-api-token': 'api-token-value-456' }),
    await t.deliver('/webhooks/hook', '{}', { authorization: `Bearer ${SECRETS.TOKEN}x` }),
    await t.deliver('/webhooks/open', '{}', { 'x-debug': `echo ${SECRETS.GH}`, authorization: 'Basic dXNlcjpwYXNz' }),
  ];
  expect(answers.map((answer) => answer.status)).toEqual([200, 401, 200, 200, 200, 200, 403, 200]);

  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  let dump = '';
  try {
    for (const table of ['events', 'rejections', 'replays']) {
      const rows = await client.query(`SELECT row_to_json(t)::text AS row, ${table === 'events' ? "encode(payload, 'escape')" : "''"} AS body FROM ${table} t`);
      dump += rows.rows.map((row) => `${row.row}\n${row.body}`).join('\n');
    }
  } finally {
    await client.end();
  }
  expect(dump).toContain('«redacted»');
  expect(dump).toContain('opened'); // the payload itself is kept
  const logs = t.logger.lines.join('\n');
  for (const leak of leaks) {
    expect(dump, `database contains ${leak}`).not.toContain(leak);
    expect(logs, `logs contain ${leak}`).not.toContain(leak);
  }
  expect(dump).not.toContain('dXNlcjpwYXNz');
});
