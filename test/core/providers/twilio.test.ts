import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../../../src/core/config.js';
import { twilioVerifier } from '../../../src/core/providers/twilio.js';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { delivery, expectNothingLeaked, replayToConsumer } from '../../helpers/providers.js';

const AUTH_TOKEN = '9a8b7c6d5e4f30211203f4e5d6c7b8a9';
const SECONDARY_TOKEN = '0f0e0d0c0b0a09080706050403020100';
const PUBLIC_URL = 'https://switchboard-dev.ngrok.app';
const HOOK_URL = `${PUBLIC_URL}/webhooks/twilio`;
const CONFIG: ConfigInput = {
  receiver: { public_url: PUBLIC_URL },
  providers: [{ name: 'twilio', kind: 'twilio', secrets: [{ env: 'TWILIO_AUTH_TOKEN' }, { value: SECONDARY_TOKEN }] }],
};

let t: TestSwitchboard;
const sent: string[] = [];

beforeAll(async () => {
  t = await startTestSwitchboard(CONFIG, { env: { TWILIO_AUTH_TOKEN: AUTH_TOKEN } });
});
afterAll(() => t?.close());

type Params = Record<string, string | string[]>;

function formBody(params: Params): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) for (const one of [value].flat()) form.append(name, one);
  return form.toString();
}

/** Signed by twilio's own getExpectedTwilioSignature, and checked with its validateRequest. */
function twilioHeaders(params: Params, { url = HOOK_URL, token = AUTH_TOKEN, algorithm }: { url?: string; token?: string; algorithm?: string } = {}): Record<string, string> {
  const signature = twilio.getExpectedTwilioSignature(token, url, params, algorithm);
  expect(twilio.validateRequest(token, signature, url, params, algorithm)).toBe(true);
  sent.push(signature);
  return { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8', 'x-twilio-signature': signature };
}

const post = (params: Params, headers: Record<string, string>, path = '/webhooks/twilio') => t.deliver(path, formBody(params), headers);

const messageStatus = (sid: string, status: string): Params => ({
  AccountSid: 'AC00000000000000000000000000000001',
  ApiVersion: '2010-04-01',
  From: '+15017122661',
  To: '+15558675310',
  MessageSid: sid,
  MessageStatus: status,
  SmsSid: sid,
  SmsStatus: status,
});

describe('twilio through the receiver', () => {
  it('accepts a signed SMS status callback: type message.<status>, id sid:status', async () => {
    const params = messageStatus('SM0000000000000000000000000000a001', 'sent');
    const answer = await post(params, twilioHeaders(params));
    expect(answer).toMatchObject({ status: 200, json: { duplicate: false } });
    const event = await t.sb.store.getEvent(answer.json.id);
    expect(event).toMatchObject({
      event_type: 'message.sent',
      external_id: 'SM0000000000000000000000000000a001:sent',
      verified: true,
      verify_detail: expect.stringMatching(/HMAC-SHA1.*secret #1/),
    });
    expect(event!.headers['x-twilio-signature']).toBe('«redacted»');
  });

  it('keeps every status of one message, and dedupes a retried one', async () => {
    const sid = 'SM0000000000000000000000000000a002';
    const ids: number[] = [];
    for (const status of ['queued', 'sent', 'delivered']) {
      const params = messageStatus(sid, status);
      const answer = await post(params, twilioHeaders(params));
      expect(answer.json.duplicate).toBe(false);
      ids.push(answer.json.id);
    }
    expect(new Set(ids).size).toBe(3);
    const retry = messageStatus(sid, 'delivered');
    expect((await post(retry, twilioHeaders(retry))).json).toEqual({ id: ids[2], duplicate: true });
  });

  it('dedupes on I-Twilio-Idempotency-Token when Twilio sends one', async () => {
    const params = messageStatus('SM0000000000000000000000000000a003', 'received');
    const headers = { ...twilioHeaders(params), 'i-twilio-idempotency-token': '4d0b3e9a-0f6e-4b1e-9f62-idem-0001' };
    const first = await post(params, headers);
    expect(await t.sb.store.getEvent(first.json.id)).toMatchObject({ event_type: 'message.received', external_id: '4d0b3e9a-0f6e-4b1e-9f62-idem-0001' });
    expect((await post(params, headers)).json).toEqual({ id: first.json.id, duplicate: true });
  });

  it('never dedupes the voice URL and <Gather> actions of one call, but does call progress events', async () => {
    const call = { AccountSid: 'AC00000000000000000000000000000001', CallSid: 'CA0000000000000000000000000000c001', From: '+15017122661', To: '+15558675310' };
    const first = { ...call, CallStatus: 'in-progress', Digits: '1' };
    const second = { ...call, CallStatus: 'in-progress', Digits: '2' };
    const a = await post(first, twilioHeaders(first));
    const b = await post(second, twilioHeaders(second));
    expect(a.json.id).not.toBe(b.json.id);
    expect(await t.sb.store.getEvent(a.json.id)).toMatchObject({ event_type: 'call.in-progress', external_id: null });

    const progress = { ...call, CallStatus: 'completed', CallbackSource: 'call-progress-events', SequenceNumber: '3', CallDuration: '42' };
    const p1 = await post(progress, twilioHeaders(progress));
    expect(await t.sb.store.getEvent(p1.json.id)).toMatchObject({ event_type: 'call.completed', external_id: 'CA0000000000000000000000000000c001:completed:3' });
    expect((await post(progress, twilioHeaders(progress))).json).toEqual({ id: p1.json.id, duplicate: true });
  });

  it('signs repeated params the way the library does (distinct values, sorted)', async () => {
    const params = { Body: 'two pictures', MediaUrl: ['https://api.twilio.com/b.jpg', 'https://api.twilio.com/a.jpg'], MessageSid: 'MM0000000000000000000000000000m001', SmsStatus: 'received' };
    expect((await post(params, twilioHeaders(params))).status).toBe(200);
  });

  it('accepts a URL signed with the default port spelled out, a query string, and the secondary token', async () => {
    const withPort = messageStatus('SM0000000000000000000000000000a004', 'sent');
    expect((await post(withPort, twilioHeaders(withPort, { url: 'https://switchboard-dev.ngrok.app:443/webhooks/twilio' }))).status).toBe(200);

    const query = messageStatus('SM0000000000000000000000000000a005', 'sent');
    const queried = await post(query, twilioHeaders(query, { url: `${HOOK_URL}?site=eu&env=dev` }), '/webhooks/twilio?site=eu&env=dev');
    expect(queried.status).toBe(200);

    const rotated = messageStatus('SM0000000000000000000000000000a006', 'sent');
    const answer = await post(rotated, twilioHeaders(rotated, { token: SECONDARY_TOKEN }));
    expect((await t.sb.store.getEvent(answer.json.id))!.verify_detail).toMatch(/secret #2/);
  });

  it('verifies SharedKey webhooks signed with HMAC-SHA256', async () => {
    const params = messageStatus('SM0000000000000000000000000000a007', 'sent');
    const headers = { ...twilioHeaders(params, { algorithm: 'HMAC_SHA256' }), 'x-twilio-webhooks-signature-settings': 'key=webhooks_sharedkey_1,algorithm=HMAC_SHA256' };
    const answer = await post(params, headers);
    expect(answer.status).toBe(200);
    expect((await t.sb.store.getEvent(answer.json.id))!.verify_detail).toMatch(/HMAC-SHA256/);
    const unknown = await post(params, { ...headers, 'x-twilio-webhooks-signature-settings': 'algorithm=HMAC_MD5' });
    expect(unknown).toMatchObject({ status: 401, json: { error: 'signature_malformed' } });
  });

  it('verifies a JSON delivery through its bodySHA256 and catches a changed body', async () => {
    const body = JSON.stringify([{ specversion: '1.0', type: 'com.twilio.messaging.message.delivered', id: 'EZ0000000000000000000000000000e001', source: '/2010-04-01/Accounts/AC1/Messages/SM1.json', data: { messageStatus: 'DELIVERED' } }]);
    const hash = twilio.getExpectedBodyHash(body);
    const url = `${HOOK_URL}?bodySHA256=${hash}`;
    const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, url, {});
    expect(twilio.validateRequestWithBody(AUTH_TOKEN, signature, url, body)).toBe(true);
    sent.push(signature);
    const headers = { 'content-type': 'application/json', 'x-twilio-signature': signature };
    const answer = await t.deliver(`/webhooks/twilio?bodySHA256=${hash}`, body, headers);
    expect(answer.status).toBe(200);
    expect(await t.sb.store.getEvent(answer.json.id)).toMatchObject({ event_type: 'com.twilio.messaging.message.delivered', external_id: 'EZ0000000000000000000000000000e001', verify_detail: expect.stringMatching(/bodySHA256/) });

    const changed = await t.deliver(`/webhooks/twilio?bodySHA256=${hash}`, body.replace('DELIVERED', 'FAILED'), headers);
    expect(changed).toMatchObject({ status: 401, json: { error: 'signature_mismatch', hint: expect.stringMatching(/bodySHA256/) } });
    const pretty = await t.deliver(`/webhooks/twilio?bodySHA256=${hash}`, JSON.stringify(JSON.parse(body), null, 2), headers);
    expect(pretty).toMatchObject({ status: 401, json: { error: 'signature_mismatch', hint: expect.stringMatching(/re-serialized/) } });
  });

  it('diagnoses a scheme mismatch, a wrong token, a malformed and a missing signature', async () => {
    const params = messageStatus('SM0000000000000000000000000000a008', 'failed');
    const http = await post(params, twilioHeaders(params, { url: 'http://switchboard-dev.ngrok.app/webhooks/twilio' }));
    expect(http).toMatchObject({ status: 401, json: { error: 'signature_mismatch', hint: expect.stringMatching(/signed http:\/\/ but receiver.public_url says https:\/\//) } });
    const wrong = await post(params, twilioHeaders(params, { token: 'ffffffffffffffffffffffffffffffff' }));
    expect(wrong).toMatchObject({ status: 401, json: { error: 'signature_mismatch', hint: expect.stringMatching(/Auth Token.*receiver.public_url/) } });
    const tampered = await post({ ...params, MessageStatus: 'delivered' }, twilioHeaders(params));
    expect(tampered).toMatchObject({ status: 401, json: { error: 'signature_mismatch' } });
    expect(await post(params, { 'x-twilio-signature': 'abc' })).toMatchObject({ status: 401, json: { error: 'signature_malformed' } });
    expect(await post(params, {})).toMatchObject({ status: 401, json: { error: 'signature_missing' } });
  });

  it('answers 503 public_url_not_configured (and says how to fix it) without receiver.public_url', async () => {
    await t.sb.updateConfig({ ...CONFIG, receiver: { port: 0 } });
    try {
      const params = messageStatus('SM0000000000000000000000000000a009', 'sent');
      const answer = await post(params, twilioHeaders(params));
      expect(answer).toMatchObject({ status: 503, json: { error: 'public_url_not_configured', hint: expect.stringMatching(/set receiver\.public_url/) } });
      const rejections = await t.sb.store.listRejections({ provider: 'twilio', limit: 1 });
      expect(rejections.items[0]?.reason).toBe('public_url_not_configured');
    } finally {
      await t.sb.updateConfig({ ...CONFIG, receiver: { port: 0, public_url: PUBLIC_URL } });
    }
  });

  it('replays re-signed for the URL the consumer is reached at, accepted by twilio.validateRequest', async () => {
    const params = messageStatus('SM0000000000000000000000000000a010', 'undelivered');
    const answer = await post(params, twilioHeaders(params));
    const received = await replayToConsumer(t, answer.json.id, '/twilio/status?tenant=7');
    expect(received.body.toString()).toBe(formBody(params));
    const receivedParams = Object.fromEntries(new URLSearchParams(received.body.toString()));
    expect(twilio.validateRequest(AUTH_TOKEN, received.headers['x-twilio-signature']!, received.target, receivedParams)).toBe(true);
    expect(twilio.validateRequest(AUTH_TOKEN, received.headers['x-twilio-signature']!, HOOK_URL, receivedParams)).toBe(false);
  });

  it('keeps the tokens and signatures out of stored rows and logs', async () => {
    await expectNothingLeaked(t, 'twilio', [AUTH_TOKEN, SECONDARY_TOKEN, ...sent]);
  });
});

describe('twilio verifier', () => {
  it('sign() makes what getExpectedTwilioSignature makes for the target URL', () => {
    const params = { CallSid: 'CA1', CallStatus: 'ringing', From: '+1', To: '+2' };
    const url = 'http://localhost:3000/voice';
    const signed = twilioVerifier.sign!({ body: Buffer.from(formBody(params)), secret: AUTH_TOKEN, nowMs: Date.now(), headers: {}, publicUrl: url });
    expect(signed).toEqual({ 'x-twilio-signature': twilio.getExpectedTwilioSignature(AUTH_TOKEN, url, params) });
  });

  it('refuses to guess without a public URL', () => {
    const params = { MessageSid: 'SM1', MessageStatus: 'sent' };
    const result = twilioVerifier.verify(delivery(formBody(params), { 'x-twilio-signature': twilio.getExpectedTwilioSignature(AUTH_TOKEN, HOOK_URL, params) }), {
      secrets: [AUTH_TOKEN],
      toleranceS: 300,
    });
    expect(result).toMatchObject({ ok: false, reason: 'public_url_not_configured' });
  });
});
