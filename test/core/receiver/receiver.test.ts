import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { networkInterfaces } from 'node:os';
import { sign as githubSign, verify as githubVerify } from '@octokit/webhooks-methods';
import { isValidSlackRequest } from '@slack/bolt';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';

const GITHUB_SECRET = "It's a Secret to Everybody";
const GITHUB_OLD_SECRET = 'the-secret-before-rotation-0001';
const STRIPE_SECRET = 'whsec_test_0123456789abcdefghijklmnopqrstuv';
const SLACK_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const DOCKER_TOKEN = 'dockerhub-shared-token-7f3a9c';
const stripe = new Stripe('sk_test_unused');

let t: TestSwitchboard;

beforeAll(async () => {
  t = await startTestSwitchboard({
    providers: [
      { name: 'github', kind: 'github', secrets: [{ value: GITHUB_OLD_SECRET }, { env: 'GH_SECRET' }] },
      { name: 'stripe', kind: 'stripe', secrets: [{ env: 'STRIPE_SECRET' }] },
      { name: 'slack', kind: 'slack', secrets: [{ env: 'SLACK_SECRET' }] },
      { name: 'dockerhub', kind: 'token', secrets: [{ env: 'DOCKER_TOKEN' }] },
      { name: 'homelab', kind: 'open' },
      { name: 'nosecret', kind: 'github', secrets: [{ env: 'NOT_SET' }] },
      { name: 'off', kind: 'open', enabled: false },
      { name: 'tiny', kind: 'open' },
    ],
  }, { env: { GH_SECRET: GITHUB_SECRET, STRIPE_SECRET, SLACK_SECRET, DOCKER_TOKEN } });
});
afterAll(() => t?.close());

async function githubDelivery(body: string, id: string, secret = GITHUB_SECRET, event = 'push') {
  return t.deliver('/webhooks/github', body, {
    'content-type': 'application/json',
    'x-github-event': event,
    'x-github-delivery': id,
    'x-hub-signature-256': await githubSign(secret, body),
  });
}

describe('github', () => {
  it('accepts the published test vector signature', async () => {
    expect(await githubSign(GITHUB_SECRET, 'Hello, World!')).toBe('sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17');
    const answer = await t.deliver('/webhooks/github', 'Hello, World!', {
      'x-github-event': 'ping',
      'x-github-delivery': 'vector-1',
      'x-hub-signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
    });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ id: expect.any(Number), duplicate: false });
  });

  it('stores a verified event with type, delivery id and sanitized headers', async () => {
    const body = JSON.stringify({ action: 'opened', number: 7 });
    const answer = await githubDelivery(body, 'delivery-opened-1', GITHUB_SECRET, 'pull_request');
    expect(answer.status).toBe(200);
    const event = await t.sb.store.getEvent(answer.json.id);
    expect(event).toMatchObject({
      provider: 'github',
      family: 'webhook',
      event_type: 'pull_request.opened',
      external_id: 'delivery-opened-1',
      trust_mode: 'signed',
      verified: true,
      content_type: 'application/json',
      payload_size: Buffer.byteLength(body),
    });
    expect(Buffer.from(event!.payload).toString()).toBe(body);
    expect(event!.headers['x-hub-signature-256']).toBe('«redacted»');
    expect(event!.verify_detail).toMatch(/secret #2/);
  });

  it('accepts a delivery signed with the other (rotated) secret', async () => {
    const answer = await githubDelivery('{"zen":"rotate"}', 'rotation-1', GITHUB_OLD_SECRET);
    expect(answer.status).toBe(200);
  });

  it('answers a redelivery with the first id and stores nothing new', async () => {
    const body = '{"ref":"refs/heads/main"}';
    const first = await githubDelivery(body, 'redelivered-1');
    const again = await githubDelivery(body, 'redelivered-1');
    expect(again.status).toBe(200);
    expect(again.json).toEqual({ id: first.json.id, duplicate: true });
    const page = await t.sb.store.listEvents({ provider: 'github', limit: 200 });
    expect(page.items.filter((event) => event.id === first.json.id)).toHaveLength(1);
  });

  it('dedupes concurrent redeliveries within one group commit', async () => {
    const body = '{"concurrent":true}';
    const answers = await Promise.all([1, 2, 3, 4].map(() => githubDelivery(body, 'burst-dup-1')));
    const ids = new Set(answers.map((answer) => answer.json.id));
    expect(ids.size).toBe(1);
    expect(answers.filter((answer) => answer.json.duplicate === false)).toHaveLength(1);
  });

  it('rejects a tampered body with 401 and a rejection row (never the body)', async () => {
    const signature = await githubSign(GITHUB_SECRET, '{"amount":1}');
    const answer = await t.deliver('/webhooks/github', '{"amount":1000}', {
      'x-github-event': 'push',
      'x-github-delivery': 'tampered-1',
      'x-hub-signature-256': signature,
    });
    expect(answer.status).toBe(401);
    expect(answer.json).toMatchObject({ error: 'signature_mismatch', hint: expect.stringMatching(/secret/) });
    const rejections = await t.sb.store.listRejections({ provider: 'github', limit: 10 });
    expect(rejections.items[0]).toMatchObject({ reason: 'signature_mismatch', body_size: 15 });
    expect(rejections.items[0]!.headers['x-hub-signature-256']).toBe('«redacted»');
    expect(JSON.stringify(rejections.items[0])).not.toContain('amount');
  });

  it('diagnoses a relay that re-serialized the JSON body', async () => {
    const original = '{"action":"created","issue":{"number":1}}';
    const signature = await githubSign(GITHUB_SECRET, original);
    const pretty = JSON.stringify(JSON.parse(original), null, 2);
    const answer = await t.deliver('/webhooks/github', pretty, { 'x-github-event': 'issues', 'x-hub-signature-256': signature });
    expect(answer.status).toBe(401);
    expect(answer.json.hint).toMatch(/re-serialized/);
  });

  it('rejects a missing and a garbled signature header', async () => {
    const missing = await t.deliver('/webhooks/github', '{}', { 'x-github-event': 'push' });
    expect(missing).toMatchObject({ status: 401, json: { error: 'signature_missing' } });
    const garbled = await t.deliver('/webhooks/github', '{}', { 'x-github-event': 'push', 'x-hub-signature-256': 'sha256=zz' });
    expect(garbled).toMatchObject({ status: 401, json: { error: 'signature_malformed' } });
  });

  it('answers 503 secret_not_configured naming the variable and saying to restart', async () => {
    const answer = await t.deliver('/webhooks/nosecret', '{}', { 'x-hub-signature-256': await githubSign('x', '{}') });
    const advice = 'set NOT_SET in the environment switchboard starts with and restart it, or store the secret in config.json / the UI';
    expect(answer).toMatchObject({ status: 503, json: { error: 'secret_not_configured', hint: `provider "nosecret" has no usable secret: ${advice}; then deliver again` } });
    const rejections = await t.sb.store.listRejections({ provider: 'nosecret', limit: 10 });
    expect(rejections.items[0]).toMatchObject({ reason: 'secret_not_configured', hint: expect.stringContaining(advice) });
    // The same words wherever the provider is shown (UI Providers screen, API, MCP list_providers).
    expect(t.sb.providers.statuses().find((provider) => provider.name === 'nosecret')).toMatchObject({
      secret_status: 'missing',
      last_error: `no usable secret, deliveries are refused (503): ${advice}`,
    });
    expect(t.sb.providers.statuses().find((provider) => provider.name === 'github')).not.toHaveProperty('last_error');
  });

  it('the stored signature header round-trips through the official verifier before redaction', async () => {
    // Oracle check of our fixture itself: what we sent is what GitHub's library accepts.
    const body = '{"hook":"ok"}';
    expect(await githubVerify(GITHUB_SECRET, body, await githubSign(GITHUB_SECRET, body))).toBe(true);
  });
});

describe('stripe', () => {
  const event = (id: string) => JSON.stringify({ id, object: 'event', type: 'checkout.session.completed', data: { object: {} } });
  const post = (body: string, header: string) =>
    t.deliver('/webhooks/stripe', body, { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': header });

  it('accepts a signature made by the Stripe library', async () => {
    const body = event('evt_ok_1');
    const answer = await post(body, stripe.webhooks.generateTestHeaderString({ payload: body, secret: STRIPE_SECRET }));
    expect(answer.status).toBe(200);
    const stored = await t.sb.store.getEvent(answer.json.id);
    expect(stored).toMatchObject({ event_type: 'checkout.session.completed', external_id: 'evt_ok_1', verified: true });
  });

  it('accepts any one of several v1 signatures', async () => {
    const body = event('evt_multi_1');
    const good = stripe.webhooks.generateTestHeaderString({ payload: body, secret: STRIPE_SECRET });
    const timestamp = /t=(\d+)/.exec(good)![1];
    const v1 = /v1=([0-9a-f]+)/.exec(good)![1];
    const answer = await post(body, `t=${timestamp},v1=${'0'.repeat(64)},v1=${v1}`);
    expect(answer.status).toBe(200);
  });

  it('rejects stale and future timestamps with the skew in the hint', async () => {
    const body = event('evt_stale_1');
    const stale = Math.floor(Date.now() / 1000) - 3600;
    const answer = await post(body, stripe.webhooks.generateTestHeaderString({ payload: body, secret: STRIPE_SECRET, timestamp: stale }));
    expect(answer).toMatchObject({ status: 401, json: { error: 'timestamp_out_of_tolerance' } });
    expect(answer.json.hint).toMatch(/360[01] s in the past/);
    const future = Math.floor(Date.now() / 1000) + 900;
    const ahead = await post(body, stripe.webhooks.generateTestHeaderString({ payload: body, secret: STRIPE_SECRET, timestamp: future }));
    expect(ahead.json.hint).toMatch(/in the future/);
  });

  it('rejects a wrong secret and a header without t=', async () => {
    const body = event('evt_wrong_1');
    const wrong = await post(body, stripe.webhooks.generateTestHeaderString({ payload: body, secret: 'whsec_someone_elses' }));
    expect(wrong).toMatchObject({ status: 401, json: { error: 'signature_mismatch' } });
    const malformed = await post(body, 'v1=abc');
    expect(malformed).toMatchObject({ status: 401, json: { error: 'signature_malformed' } });
  });
});

describe('slack', () => {
  function slackHeaders(body: string, timestamp = Math.floor(Date.now() / 1000), contentType = 'application/json') {
    const signature = `v0=${createHmac('sha256', SLACK_SECRET).update(`v0:${timestamp}:${body}`).digest('hex')}`;
    // The fixture must satisfy Slack's own verifier before it tells us anything about ours.
    expect(
      isValidSlackRequest({
        signingSecret: SLACK_SECRET,
        body,
        headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': timestamp },
        nowMilliseconds: timestamp * 1000,
      }),
    ).toBe(true);
    return { 'content-type': contentType, 'x-slack-signature': signature, 'x-slack-request-timestamp': String(timestamp) };
  }

  it('answers the url_verification challenge and stores it', async () => {
    const body = JSON.stringify({ type: 'url_verification', challenge: 'abc123', token: 'legacy' });
    const answer = await t.deliver('/webhooks/slack', body, slackHeaders(body));
    expect(answer).toMatchObject({ status: 200, json: { challenge: 'abc123' } });
    const page = await t.sb.store.listEvents({ provider: 'slack', event_type: 'url_verification', limit: 5 });
    expect(page.items).toHaveLength(1);
  });

  it('stores an Events API callback with event.type and event_id', async () => {
    const body = JSON.stringify({ type: 'event_callback', event_id: 'Ev01', event: { type: 'app_mention', text: 'hi' } });
    const answer = await t.deliver('/webhooks/slack', body, slackHeaders(body));
    expect(answer.status).toBe(200);
    expect(await t.sb.store.getEvent(answer.json.id)).toMatchObject({ event_type: 'app_mention', external_id: 'Ev01' });
  });

  it('verifies a form-encoded slash command', async () => {
    const body = 'command=%2Fdeploy&text=prod&trigger_id=13345224609.738474920.8088930838d88f008e0';
    const answer = await t.deliver('/webhooks/slack', body, slackHeaders(body, undefined, 'application/x-www-form-urlencoded'));
    expect(answer.status).toBe(200);
    expect(await t.sb.store.getEvent(answer.json.id)).toMatchObject({ event_type: 'command /deploy' });
  });

  it('rejects a timestamp outside 300 s in either direction', async () => {
    const body = '{"type":"event_callback","event":{"type":"message"}}';
    const old = await t.deliver('/webhooks/slack', body, slackHeaders(body, Math.floor(Date.now() / 1000) - 301 - 5));
    expect(old).toMatchObject({ status: 401, json: { error: 'timestamp_out_of_tolerance' } });
    const ahead = await t.deliver('/webhooks/slack', body, slackHeaders(body, Math.floor(Date.now() / 1000) + 400));
    expect(ahead).toMatchObject({ status: 401, json: { error: 'timestamp_out_of_tolerance' } });
  });
});

describe('token and open', () => {
  it('accepts the token as Bearer, X-Switchboard-Token and ?token=', async () => {
    const bearer = await t.deliver('/webhooks/dockerhub', '{"repository":{}}', { authorization: `Bearer ${DOCKER_TOKEN}` });
    const header = await t.deliver('/webhooks/dockerhub', '{}', { 'x-switchboard-token': DOCKER_TOKEN });
    const query = await t.deliver(`/webhooks/dockerhub?token=${DOCKER_TOKEN}`, '{}');
    expect([bearer.status, header.status, query.status]).toEqual([200, 200, 200]);
    const event = await t.sb.store.getEvent(bearer.json.id);
    expect(event).toMatchObject({ trust_mode: 'token', verified: false });
    expect(event!.headers.authorization).toBe('«redacted»');
  });

  it('answers 403 for a wrong or missing token', async () => {
    expect(await t.deliver('/webhooks/dockerhub', '{}', { authorization: 'Bearer nope' })).toMatchObject({ status: 403, json: { error: 'token_mismatch' } });
    expect(await t.deliver('/webhooks/dockerhub', '{}')).toMatchObject({ status: 403, json: { error: 'token_missing' } });
  });

  it('stores malformed JSON, an empty body and invalid UTF-8 as the bytes they are', async () => {
    const bodies = [Buffer.from('{"unterminated":'), Buffer.alloc(0), Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28])];
    for (const body of bodies) {
      const answer = await t.deliver('/webhooks/homelab', body, { 'content-type': 'application/octet-stream' });
      expect(answer.status).toBe(200);
      const event = await t.sb.store.getEvent(answer.json.id);
      expect(Buffer.from(event!.payload).equals(body)).toBe(true);
      expect(event).toMatchObject({ trust_mode: 'open', verified: false, payload_size: body.length });
    }
  });

  it('answers 404 for an unknown or disabled provider and stores nothing', async () => {
    const before = await t.sb.store.latestEventId();
    expect(await t.deliver('/webhooks/nobody', '{}')).toMatchObject({ status: 404, json: { error: 'unknown_provider' } });
    expect(await t.deliver('/webhooks/off', '{}')).toMatchObject({ status: 404, json: { error: 'provider_disabled' } });
    expect(await t.sb.store.latestEventId()).toBe(before);
  });

  it('takes the rightmost valid X-Forwarded-For IP from a loopback peer (the hop the tunnel agent appended)', async () => {
    const cases: [forwarded: string | string[], expected: string][] = [
      ['203.0.113.9', '203.0.113.9'],
      // The client wrote the left part; the tunnel agent appended the real address.
      ['203.0.113.9, 10.0.0.1', '10.0.0.1'],
      ['1.1.1.1, 8.8.8.8, 198.51.100.7', '198.51.100.7'],
      ['198.51.100.7, not-an-ip', '198.51.100.7'],
      ['198.51.100.7, 192.0.2.1:443, 999.1.1.1, ', '198.51.100.7'],
      ['[2001:db8::1]', '2001:db8::1'],
      ['2001:DB8::2', '2001:db8::2'],
      ['::ffff:192.0.2.77', '192.0.2.77'],
      [`${'x'.repeat(5000)}, 192.0.2.5`, '192.0.2.5'],
      // Two header lines: Node joins them in order, the last line is the agent's.
      [['192.0.2.10', '192.0.2.11'], '192.0.2.11'],
      // Nothing usable: the socket peer.
      ['garbage, <script>, ', '127.0.0.1'],
      ['', '127.0.0.1'],
    ];
    for (const [forwarded, expected] of cases) {
      const id = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          `${t.sb.url.receiver}/webhooks/homelab`,
          { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': forwarded } },
          (res) => {
            let body = '';
            res.on('data', (chunk) => (body += chunk));
            res.on('end', () => resolve(JSON.parse(body).id));
          },
        );
        req.on('error', reject);
        req.end('{}');
      });
      expect({ forwarded, source_ip: (await t.sb.store.getEvent(id))!.source_ip }).toEqual({ forwarded, source_ip: expected });
    }
  });
});

describe('receiver port', () => {
  it('answers /healthz and refuses everything but /webhooks', async () => {
    const health = await fetch(`${t.sb.url.receiver}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    expect((await fetch(`${t.sb.url.receiver}/api/events`)).status).toBe(404);
    expect((await fetch(`${t.sb.url.receiver}/mcp`, { method: 'POST', body: '{}' })).status).toBe(404);
  });

  it('answers GET on a webhook route with 405 and Allow: POST', async () => {
    const response = await fetch(`${t.sb.url.receiver}/webhooks/homelab`);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });
});

describe('X-Forwarded-For from a peer that is not loopback', () => {
  const external = Object.values(networkInterfaces())
    .flat()
    .find((address) => address && !address.internal && address.family === 'IPv4')?.address;

  it.skipIf(!external)('is ignored: the socket peer is the source', async () => {
    const remote = await startTestSwitchboard({ receiver: { host: '0.0.0.0' }, providers: [{ name: 'homelab', kind: 'open' }] });
    try {
      const port = new URL(remote.sb.url.receiver).port;
      const response = await fetch(`http://${external}:${port}/webhooks/homelab`, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.9, 198.51.100.7' },
      });
      expect(response.status).toBe(200);
      const { id } = (await response.json()) as { id: number };
      expect((await remote.sb.store.getEvent(id))!.source_ip).toBe(external);
    } finally {
      await remote.close();
    }
  });
});
