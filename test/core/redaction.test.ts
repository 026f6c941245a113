import { sign } from '@octokit/webhooks-methods';
import pg from 'pg';
import Stripe from 'stripe';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containsSecret, isSecretHeader, redactQuery, sanitizeHeaders } from '../../src/core/redact.js';
import { REDACTED } from '../../src/shared/events.js';
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

describe('credential headers by name', () => {
  it('redacts every credential-looking header name', () => {
    for (const name of [
      'token', 'x-token', 'api-key', 'x-api-key', 'apikey', 'x-apikey', 'x-api-token', 'x-secret', 'client-secret', 'x-password',
      'x-passwd', 'x-auth', 'x-auth-token', 'x-auth-user', 'x-oauth-scopes', 'x-session-id', 'session', 'x-csrf-token',
      'x-amz-security-token', 'x-goog-signature', 'x-credentials', 'x-access-key', 'private-key', 'proxy-authorization',
      'authorization', 'cookie', 'set-cookie', 'X-Hub-Signature-256', 'x-jwt', 'x-pwd',
    ]) {
      expect({ name, secret: isSecretHeader(name) }).toEqual({ name, secret: true });
    }
  });

  it('keeps ordinary and routing headers, including ids whose name says "token"', () => {
    for (const name of ['content-type', 'user-agent', 'x-github-event', 'x-github-delivery', 'i-twilio-idempotency-token', 'x-author', 'x-request-id', 'accept', 'host', 'x-forwarded-for']) {
      expect({ name, secret: isSecretHeader(name) }).toEqual({ name, secret: false });
    }
  });
});

describe('configured secrets in any encoding', () => {
  const secret = 'cfg-secret-Value-0123456789';
  const encodings: Record<string, string> = {
    raw: secret,
    embedded: `note ${secret} here`,
    base64: Buffer.from(secret).toString('base64'),
    base64url: Buffer.from(`${secret}??>>`).toString('base64url'),
    'base64 unpadded': Buffer.from(secret).toString('base64').replace(/=+$/, ''),
    'base64 inside text': `v=${Buffer.from(`xy${secret}`).toString('base64')};`,
    hex: Buffer.from(secret).toString('hex'),
    'hex uppercase': Buffer.from(secret).toString('hex').toUpperCase(),
    'url-encoded': encodeURIComponent(`a ${secret}/&`),
    'form-encoded': `a+${secret.replace(/-/g, '%2D')}`,
    'Basic credentials': `Basic ${Buffer.from(`user:${secret}`).toString('base64')}`,
    'Basic credentials, secret as user': `Basic ${Buffer.from(`${secret}:`).toString('base64')}`,
  };
  for (const [how, value] of Object.entries(encodings)) {
    it(`finds it ${how}`, () => {
      expect(containsSecret(value, [secret])).toBe(true);
      expect(sanitizeHeaders({ 'x-debug': value }, [secret])['x-debug']).toBe(REDACTED);
    });
  }

  it('leaves values that do not carry it', () => {
    for (const value of ['application/json', Buffer.from('something else entirely').toString('base64'), 'deadbeefdeadbeefdeadbeef', `${secret.slice(0, 10)}…`]) {
      expect(containsSecret(value, [secret])).toBe(false);
    }
  });

  it('redacts query parameters by name and by value', () => {
    const path = `/webhooks/x?token=abc&a=1&api_key=k&x-secret=s&sig=zz&debug=${Buffer.from(secret).toString('base64url')}&plain=ok#frag`;
    expect(redactQuery(path, [secret])).toBe(
      `/webhooks/x?token=${encodeURIComponent(REDACTED)}&a=1&api_key=${encodeURIComponent(REDACTED)}&x-secret=${encodeURIComponent(REDACTED)}&sig=${encodeURIComponent(REDACTED)}&debug=${encodeURIComponent(REDACTED)}&plain=ok#frag`,
    );
  });
});

it('keeps widened credential headers and encoded secrets out of events, rejections and replays', async (context) => {
  if (!t || !db) return context.skip();
  const encoded = Buffer.from(SECRETS.TOKEN).toString('base64');
  const leaks = ['tok-value-1', 'key-value-2', 'api-token-value-3', 'secret-value-4', 'password-value-5', 'sess-value-6', encoded];
  const credentials = {
    token: 'tok-value-1',
    'api-key': 'key-value-2',
    'x-api-token': 'api-token-value-3',
    'x-secret': 'secret-value-4',
    'x-password': 'password-value-5',
    'x-session-id': 'sess-value-6',
    'x-debug': encoded,
  };
  const consumer = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'x-token': 'tok-value-1', 'x-echo': `Basic ${Buffer.from(`u:${SECRETS.TOKEN}`).toString('base64')}` }).end('ok');
  });
  await new Promise<void>((resolve) => consumer.listen(0, '127.0.0.1', resolve));
  try {
    const accepted = await t.deliver('/webhooks/open', '{"kept":true}', credentials);
    const rejected = await t.deliver('/webhooks/hook', '{}', { ...credentials, authorization: 'Bearer wrong-token-value' });
    expect([accepted.status, rejected.status]).toEqual([200, 403]);
    const port = (consumer.address() as AddressInfo).port;
    const replay = await t.sb.replays.replay({ eventId: accepted.json.id, targetUrl: `http://127.0.0.1:${port}/hook`, requestedBy: 'ui' });
    expect(replay.response_status).toBe(200);

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    let dump = '';
    try {
      for (const table of ['events', 'rejections', 'replays']) {
        const rows = await client.query(`SELECT row_to_json(t)::text AS row FROM ${table} t`);
        dump += rows.rows.map((row) => row.row).join('\n');
      }
    } finally {
      await client.end();
    }
    expect(dump).toContain('"x-api-token": "«redacted»"');
    for (const leak of leaks) expect(dump, `database contains ${leak}`).not.toContain(leak);
    expect(dump).not.toContain(Buffer.from(`u:${SECRETS.TOKEN}`).toString('base64'));
  } finally {
    await new Promise((resolve) => consumer.close(resolve));
  }
});
