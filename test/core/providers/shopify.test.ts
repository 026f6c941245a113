import '@shopify/shopify-api/adapters/web-api';
import { ApiVersion, LogSeverity, shopifyApi } from '@shopify/shopify-api';
import { getHmac } from '@shopify/shopify-api/test-helpers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shopifyVerifier } from '../../../src/core/providers/shopify.js';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { expectNothingLeaked, replayToConsumer } from '../../helpers/providers.js';

const SECRET = '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';
const OLD_SECRET = 'shpss_before_rotation_11223344556677';

// Shopify's own library, as an app would use it, is the oracle for what we re-sign.
const shopify = shopifyApi({
  apiKey: 'test-app',
  apiSecretKey: SECRET,
  scopes: [],
  hostName: 'localhost',
  apiVersion: ApiVersion.July25,
  isEmbeddedApp: false,
  logger: { level: LogSeverity.Error },
});

let t: TestSwitchboard;
const sent: string[] = [];

beforeAll(async () => {
  t = await startTestSwitchboard(
    { providers: [{ name: 'shop', kind: 'shopify', secrets: [{ env: 'SHOPIFY_SECRET' }, { value: OLD_SECRET }] }] },
    { env: { SHOPIFY_SECRET: SECRET } },
  );
});
afterAll(() => t?.close());

function webhookHeaders(body: string, id: string, secret = SECRET): Record<string, string> {
  const hmac = getHmac(body, secret);
  sent.push(hmac);
  return {
    'content-type': 'application/json',
    'x-shopify-hmac-sha256': hmac,
    'x-shopify-topic': 'orders/create',
    'x-shopify-shop-domain': 'switchboard-dev.myshopify.com',
    'x-shopify-api-version': '2025-07',
    'x-shopify-webhook-id': id,
    'x-shopify-event-id': `event-${id}`,
  };
}

describe('shopify', () => {
  it('accepts a delivery signed by Shopify\'s test helper and stores topic and webhook id', async () => {
    const body = JSON.stringify({ id: 820982911946154500, email: 'jon@example.com', total_price: '403.00' });
    const answer = await t.deliver('/webhooks/shop', body, webhookHeaders(body, 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043'));
    expect(answer).toMatchObject({ status: 200, json: { duplicate: false } });
    const event = await t.sb.store.getEvent(answer.json.id);
    expect(event).toMatchObject({
      event_type: 'orders/create',
      external_id: 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
      trust_mode: 'signed',
      verified: true,
      verify_detail: expect.stringMatching(/secret #1/),
    });
    expect(event!.headers['x-shopify-hmac-sha256']).toBe('«redacted»');
    expect(Buffer.from(event!.payload).toString()).toBe(body);
  });

  it('accepts the events-style headers (Shopify-Hmac-Sha256, Shopify-Topic) and falls back to the event id', async () => {
    const body = '{"id":42,"title":"Hat"}';
    const hmac = getHmac(body, SECRET);
    sent.push(hmac);
    const answer = await t.deliver('/webhooks/shop', body, {
      'content-type': 'application/json',
      'shopify-hmac-sha256': hmac,
      'shopify-topic': 'products/update',
      'shopify-event-id': 'evt-products-42',
    });
    expect(answer.status).toBe(200);
    expect(await t.sb.store.getEvent(answer.json.id)).toMatchObject({ event_type: 'products/update', external_id: 'evt-products-42' });
  });

  it('accepts the previous secret while it is rotated out', async () => {
    const body = '{"rotation":true}';
    const answer = await t.deliver('/webhooks/shop', body, webhookHeaders(body, 'rotation-1', OLD_SECRET));
    expect(answer.status).toBe(200);
    expect((await t.sb.store.getEvent(answer.json.id))!.verify_detail).toMatch(/secret #2/);
  });

  it('answers a retry of the same webhook id with the first event', async () => {
    const body = '{"retry":1}';
    const first = await t.deliver('/webhooks/shop', body, webhookHeaders(body, 'retried-1'));
    const again = await t.deliver('/webhooks/shop', body, webhookHeaders(body, 'retried-1'));
    expect(again.json).toEqual({ id: first.json.id, duplicate: true });
  });

  it('rejects a wrong secret, a tampered body, a re-serialized body, a malformed and a missing header', async () => {
    const body = '{"order":{"id":1,"total":"10.00"}}';
    const wrong = await t.deliver('/webhooks/shop', body, webhookHeaders(body, 'wrong-1', 'someone-elses-secret'));
    expect(wrong).toMatchObject({ status: 401, json: { error: 'signature_mismatch', hint: expect.stringMatching(/client secret/) } });

    const tampered = await t.deliver('/webhooks/shop', '{"order":{"id":1,"total":"0.01"}}', webhookHeaders(body, 'tampered-1'));
    expect(tampered).toMatchObject({ status: 401, json: { error: 'signature_mismatch' } });

    const pretty = JSON.stringify(JSON.parse(body), null, 2);
    const reserialized = await t.deliver('/webhooks/shop', pretty, webhookHeaders(body, 'pretty-1'));
    expect(reserialized).toMatchObject({ status: 401, json: { error: 'signature_mismatch', hint: expect.stringMatching(/re-serialized/) } });

    const malformed = await t.deliver('/webhooks/shop', body, { ...webhookHeaders(body, 'bad-1'), 'x-shopify-hmac-sha256': 'not base64!' });
    expect(malformed).toMatchObject({ status: 401, json: { error: 'signature_malformed' } });

    const missing = await t.deliver('/webhooks/shop', body, { 'x-shopify-topic': 'orders/create' });
    expect(missing).toMatchObject({ status: 401, json: { error: 'signature_missing' } });

    const rejections = await t.sb.store.listRejections({ provider: 'shop', limit: 10 });
    expect(rejections.items.map((rejection) => rejection.reason)).toEqual([
      'signature_missing',
      'signature_malformed',
      'signature_mismatch',
      'signature_mismatch',
      'signature_mismatch',
    ]);
  });

  it('re-signs a replay so that Shopify\'s own webhooks.validate accepts it, in both header styles', async () => {
    const body = Buffer.from('{"id":7,"note":"édité après coup"}');
    const common = { 'x-shopify-shop-domain': 'switchboard-dev.myshopify.com', 'x-shopify-api-version': '2025-07', 'x-shopify-webhook-id': 'w-7' };
    const signed = shopifyVerifier.sign!({ body, secret: SECRET, nowMs: Date.now(), headers: { ...common, 'x-shopify-topic': 'orders/paid' }, publicUrl: null });
    expect(Object.keys(signed)).toEqual(['x-shopify-hmac-sha256']);
    const request = new Request('http://localhost:3000/webhooks', { method: 'POST', body, headers: { ...common, 'x-shopify-topic': 'orders/paid', ...signed } });
    expect(await shopify.webhooks.validate({ rawBody: body.toString(), rawRequest: request })).toMatchObject({ valid: true, webhookType: 'webhooks' });

    const eventsHeaders = {
      'shopify-topic': 'orders/paid',
      'shopify-shop-domain': 'switchboard-dev.myshopify.com',
      'shopify-api-version': '2025-07',
      'shopify-webhook-id': 'w-8',
      'shopify-event-id': 'e-8',
    };
    const eventsSigned = shopifyVerifier.sign!({ body, secret: SECRET, nowMs: Date.now(), headers: eventsHeaders, publicUrl: null });
    expect(Object.keys(eventsSigned)).toEqual(['shopify-hmac-sha256']);
    const eventsRequest = new Request('http://localhost:3000/webhooks', { method: 'POST', body, headers: { ...eventsHeaders, ...eventsSigned } });
    expect(await shopify.webhooks.validate({ rawBody: body.toString(), rawRequest: eventsRequest })).toMatchObject({ valid: true, webhookType: 'events' });

    // And what a consumer with the wrong secret computes does not match.
    expect(signed['x-shopify-hmac-sha256']).not.toBe(getHmac(body.toString(), OLD_SECRET));
  });

  it('replays a stored delivery re-signed with the current secret, accepted by webhooks.validate', async () => {
    const body = '{"id":99,"line_items":[]}';
    const answer = await t.deliver('/webhooks/shop', body, webhookHeaders(body, 'replayed-1'));
    const received = await replayToConsumer(t, answer.json.id);
    expect(received.body.toString()).toBe(body);
    expect(received.headers).toMatchObject({ 'x-shopify-topic': 'orders/create', 'x-shopify-webhook-id': 'replayed-1' });
    const request = new Request(`http://localhost${received.url}`, { method: 'POST', body: received.body, headers: received.headers });
    expect(await shopify.webhooks.validate({ rawBody: received.body.toString(), rawRequest: request })).toMatchObject({ valid: true, webhookId: 'replayed-1' });
  });

  it('keeps the secrets and signatures out of stored rows and logs', async () => {
    await expectNothingLeaked(t, 'shop', [SECRET, OLD_SECRET, ...sent]);
  });

  it('lists its signature headers for redaction and keeps the routing headers on replay', () => {
    expect(shopifyVerifier.secretHeaders).toEqual(['x-shopify-hmac-sha256', 'shopify-hmac-sha256']);
    expect(shopifyVerifier.replayHeaders).toEqual(expect.arrayContaining(['x-shopify-topic', 'x-shopify-webhook-id', 'shopify-topic']));
  });
});
