import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { standardWebhooksVerifier } from '../../../src/core/providers/standard-webhooks.js';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { delivery, expectNothingLeaked, replayToConsumer } from '../../helpers/providers.js';

// The published Standard Webhooks test vector (STACK.md).
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const SECRET = 'whsec_' + Buffer.from('switchboard standard webhooks key 01').toString('base64');
const OLD_SECRET = 'whsec_' + Buffer.from('the key before the rotation 0002').toString('base64');

let t: TestSwitchboard;
/** The switchboard's clock: real time unless a test pins it. */
let pinnedNowMs: number | undefined;
const sent: string[] = [];

beforeAll(async () => {
  t = await startTestSwitchboard(
    {
      providers: [
        { name: 'clerk', kind: 'standard-webhooks', secrets: [{ env: 'CLERK_SECRET' }, { value: OLD_SECRET }] },
        { name: 'vector', kind: 'standard-webhooks', secrets: [{ value: VECTOR.secret }] },
      ],
    },
    { env: { CLERK_SECRET: SECRET }, now: () => pinnedNowMs ?? Date.now() },
  );
});
afterAll(() => t?.close());

/** Headers made by the standardwebhooks library itself. */
function signedHeaders(id: string, body: string, { secret = SECRET, at = new Date() } = {}): Record<string, string> {
  const signature = new StandardWebhook(secret).sign(id, at, body);
  sent.push(signature.slice(3));
  return { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
}

describe('standard-webhooks through the receiver', () => {
  it('accepts the published test vector', async () => {
    expect(new StandardWebhook(VECTOR.secret).sign(VECTOR.id, new Date(VECTOR.timestamp * 1000), VECTOR.body)).toBe(VECTOR.signature);
    pinnedNowMs = VECTOR.timestamp * 1000 + 30_000;
    try {
      const answer = await t.deliver('/webhooks/vector', VECTOR.body, {
        'webhook-id': VECTOR.id,
        'webhook-timestamp': String(VECTOR.timestamp),
        'webhook-signature': VECTOR.signature,
      });
      expect(answer).toMatchObject({ status: 200, json: { duplicate: false } });
      expect(await t.sb.store.getEvent(answer.json.id)).toMatchObject({ external_id: VECTOR.id, verified: true });
    } finally {
      pinnedNowMs = undefined;
    }
  });

  it('accepts a delivery signed by the standardwebhooks library and stores type and webhook-id', async () => {
    const body = JSON.stringify({ type: 'user.created', data: { id: 'user_29w83sxmDNGwOuEthce5gg56FcC' } });
    const answer = await t.deliver('/webhooks/clerk', body, signedHeaders('msg_2cRaQWk9bq4CAbPjZAr8lX6QrB7', body));
    expect(answer.status).toBe(200);
    const event = await t.sb.store.getEvent(answer.json.id);
    expect(event).toMatchObject({ event_type: 'user.created', external_id: 'msg_2cRaQWk9bq4CAbPjZAr8lX6QrB7', verify_detail: expect.stringMatching(/secret #1/) });
    expect(event!.headers['webhook-signature']).toBe('«redacted»');
    expect(event!.headers['webhook-id']).toBe('msg_2cRaQWk9bq4CAbPjZAr8lX6QrB7');
  });

  it('accepts svix-branded headers signed by the svix library (Clerk, Resend)', async () => {
    const body = JSON.stringify({ type: 'email.delivered', data: { email_id: 're_1' } });
    const at = new Date();
    const signature = new SvixWebhook(SECRET).sign('msg_svix_1', at, body);
    sent.push(signature.slice(3));
    const answer = await t.deliver('/webhooks/clerk', body, {
      'content-type': 'application/json',
      'svix-id': 'msg_svix_1',
      'svix-timestamp': String(Math.floor(at.getTime() / 1000)),
      'svix-signature': signature,
    });
    expect(answer.status).toBe(200);
    const event = await t.sb.store.getEvent(answer.json.id);
    expect(event).toMatchObject({ event_type: 'email.delivered', external_id: 'msg_svix_1' });
    expect(event!.headers['svix-signature']).toBe('«redacted»');
  });

  it('accepts one good signature among several, and the rotated-out secret', async () => {
    const body = '{"type":"session.created"}';
    const headers = signedHeaders('msg_multi_1', body);
    const answer = await t.deliver('/webhooks/clerk', body, { ...headers, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')} v1a,c29tZXRoaW5nIGVsc2U= ${headers['webhook-signature']}` });
    expect(answer.status).toBe(200);
    const rotated = await t.deliver('/webhooks/clerk', body, signedHeaders('msg_rotated_1', body, { secret: OLD_SECRET }));
    expect(rotated.status).toBe(200);
    expect((await t.sb.store.getEvent(rotated.json.id))!.verify_detail).toMatch(/secret #2/);
  });

  it('dedupes a redelivery of the same webhook-id (fresh timestamp, fresh signature)', async () => {
    const body = '{"type":"user.updated"}';
    const first = await t.deliver('/webhooks/clerk', body, signedHeaders('msg_retry_1', body));
    const again = await t.deliver('/webhooks/clerk', body, signedHeaders('msg_retry_1', body, { at: new Date(Date.now() + 2000) }));
    expect(again).toMatchObject({ status: 200, json: { id: first.json.id, duplicate: true } });
  });

  it('rejects stale and future timestamps, a wrong secret, a re-serialized body and malformed headers', async () => {
    const body = '{"type":"user.deleted","data":{"id":"u1"}}';
    const stale = await t.deliver('/webhooks/clerk', body, signedHeaders('msg_stale', body, { at: new Date(Date.now() - 3600_000) }));
    expect(stale).toMatchObject({ status: 401, json: { error: 'timestamp_out_of_tolerance', hint: expect.stringMatching(/360\d s in the past/) } });
    const future = await t.deliver('/webhooks/clerk', body, signedHeaders('msg_future', body, { at: new Date(Date.now() + 400_000) }));
    expect(future).toMatchObject({ status: 401, json: { error: 'timestamp_out_of_tolerance', hint: expect.stringMatching(/in the future/) } });

    const wrong = await t.deliver('/webhooks/clerk', body, signedHeaders('msg_wrong', body, { secret: 'whsec_' + Buffer.from('not the key').toString('base64') }));
    expect(wrong).toMatchObject({ status: 401, json: { error: 'signature_mismatch', hint: expect.stringMatching(/whsec_/) } });

    const pretty = await t.deliver('/webhooks/clerk', JSON.stringify(JSON.parse(body), null, 2), signedHeaders('msg_pretty', body));
    expect(pretty).toMatchObject({ status: 401, json: { error: 'signature_mismatch', hint: expect.stringMatching(/re-serialized/) } });

    const good = signedHeaders('msg_malformed', body);
    const noV1 = await t.deliver('/webhooks/clerk', body, { ...good, 'webhook-signature': 'g0hM9SsE+OTPJTGt' });
    expect(noV1).toMatchObject({ status: 401, json: { error: 'signature_malformed' } });
    const asymmetric = await t.deliver('/webhooks/clerk', body, { ...good, 'webhook-signature': 'v1a,c29tZXRoaW5n' });
    expect(asymmetric.json.hint).toMatch(/v1a/);
    const { 'webhook-timestamp': _timestamp, ...noTimestamp } = good;
    expect(await t.deliver('/webhooks/clerk', body, noTimestamp)).toMatchObject({ status: 401, json: { error: 'timestamp_missing' } });
    const { 'webhook-id': _id, ...noId } = good;
    expect(await t.deliver('/webhooks/clerk', body, noId)).toMatchObject({ status: 401, json: { error: 'signature_malformed' } });
    expect(await t.deliver('/webhooks/clerk', body, { 'content-type': 'application/json' })).toMatchObject({ status: 401, json: { error: 'signature_missing' } });
  });

  it('replays re-signed so that the standardwebhooks library verifies what the consumer got', async () => {
    const body = '{"type":"invoice.paid","data":{"amount":4200}}';
    const answer = await t.deliver('/webhooks/clerk', body, signedHeaders('msg_replay_1', body, { at: new Date(Date.now() - 200_000) }));
    expect(answer.status).toBe(200);
    const received = await replayToConsumer(t, answer.json.id);
    expect(received.body.toString()).toBe(body);
    expect(received.headers['webhook-id']).toBe('msg_replay_1');
    expect(Number(received.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) - 5);
    expect(new StandardWebhook(SECRET).verify(received.body, received.headers)).toEqual(JSON.parse(body));
  });

  it('replays a svix-branded delivery with svix-* headers that the svix library verifies', async () => {
    const body = '{"type":"email.bounced"}';
    const at = new Date(Date.now() - 100_000);
    const answer = await t.deliver('/webhooks/clerk', body, {
      'svix-id': 'msg_svix_replay',
      'svix-timestamp': String(Math.floor(at.getTime() / 1000)),
      'svix-signature': new SvixWebhook(SECRET).sign('msg_svix_replay', at, body),
    });
    const received = await replayToConsumer(t, answer.json.id);
    expect(received.headers).toMatchObject({ 'svix-id': 'msg_svix_replay' });
    expect(received.headers['webhook-signature']).toBeUndefined();
    expect(new SvixWebhook(SECRET).verify(received.body, received.headers)).toEqual(JSON.parse(body));
  });

  it('keeps the secrets and signatures out of stored rows and logs', async () => {
    await expectNothingLeaked(t, 'clerk', [SECRET, SECRET.slice('whsec_'.length), OLD_SECRET, ...sent]);
  });
});

describe('standard-webhooks verifier', () => {
  const context = { secrets: [VECTOR.secret], toleranceS: 300 };
  const vector = (nowS: number) =>
    standardWebhooksVerifier.verify(
      delivery(VECTOR.body, { 'webhook-id': VECTOR.id, 'webhook-timestamp': String(VECTOR.timestamp), 'webhook-signature': VECTOR.signature }, { nowMs: nowS * 1000 }),
      context,
    );

  it('holds the tolerance exactly, in both directions', () => {
    expect(vector(VECTOR.timestamp + 300).ok).toBe(true);
    expect(vector(VECTOR.timestamp - 300).ok).toBe(true);
    expect(vector(VECTOR.timestamp + 301)).toMatchObject({ ok: false, reason: 'timestamp_out_of_tolerance', hint: expect.stringMatching(/301 s in the past/) });
    expect(vector(VECTOR.timestamp - 301)).toMatchObject({ ok: false, reason: 'timestamp_out_of_tolerance', hint: expect.stringMatching(/301 s in the future/) });
  });

  it('signs what the library signs (sign() against the published vector)', () => {
    const signed = standardWebhooksVerifier.sign!({ body: Buffer.from(VECTOR.body), secret: VECTOR.secret, nowMs: VECTOR.timestamp * 1000, headers: { 'webhook-id': VECTOR.id }, publicUrl: null });
    expect(signed).toEqual({ 'webhook-id': VECTOR.id, 'webhook-timestamp': String(VECTOR.timestamp), 'webhook-signature': VECTOR.signature });
  });

  it('lists both signature header spellings for redaction', () => {
    expect(standardWebhooksVerifier.secretHeaders).toEqual(['webhook-signature', 'svix-signature']);
  });
});
