import { createHmac } from 'node:crypto';
import { Paddle } from '@paddle/paddle-node-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paddleVerifier } from '../../../src/core/providers/paddle.js';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { delivery, expectNothingLeaked, replayToConsumer } from '../../helpers/providers.js';

const SECRET = 'pdl_ntfset_01hv8x29kz0t586xy6zn1a62ne_ZfDi0vXrmh+1Z6zXh9cqZ9LkYv6O3ZxQ';
const OLD_SECRET = 'pdl_ntfset_01hv8x00000000000000000000_previous0000000000000000000';
const paddle = new Paddle('pdl_sdbx_apikey_unused_in_tests');

let t: TestSwitchboard;
const sent: string[] = [];

beforeAll(async () => {
  t = await startTestSwitchboard(
    { providers: [{ name: 'paddle', kind: 'paddle', secrets: [{ env: 'PADDLE_SECRET' }, { value: OLD_SECRET }] }] },
    { env: { PADDLE_SECRET: SECRET } },
  );
});
afterAll(() => t?.close());

const h1 = (secret: string, ts: number, body: string) => createHmac('sha256', secret).update(`${ts}:${body}`).digest('hex');

/**
 * Paddle's SDK only verifies, so fixtures are signed here and, when fresh, must first pass the
 * SDK's own isSignatureValid (which allows 5 s) before they tell us anything about ours.
 */
async function paddleHeaders(body: string, { secret = SECRET, ts = Math.floor(Date.now() / 1000) } = {}): Promise<Record<string, string>> {
  const signature = h1(secret, ts, body);
  const header = `ts=${ts};h1=${signature}`;
  if (Math.abs(ts - Date.now() / 1000) < 3) expect(await paddle.webhooks.isSignatureValid(body, secret, header)).toBe(true);
  sent.push(signature);
  return { 'content-type': 'application/json', 'paddle-signature': header };
}

function notification(eventId: string, eventType = 'transaction.completed'): string {
  return JSON.stringify({
    event_id: eventId,
    event_type: eventType,
    occurred_at: new Date().toISOString(),
    notification_id: `ntf_${eventId.slice(4)}`,
    data: { id: 'txn_01hv8wptq8987qeep44cyrewp9', status: 'completed', currency_code: 'USD' },
  });
}

describe('paddle through the receiver', () => {
  it('accepts a signed notification and stores event_type and event_id', async () => {
    const body = notification('evt_01hv8x2acma2gz1my3x0tt3wv6');
    const answer = await t.deliver('/webhooks/paddle', body, await paddleHeaders(body));
    expect(answer).toMatchObject({ status: 200, json: { duplicate: false } });
    const event = await t.sb.store.getEvent(answer.json.id);
    expect(event).toMatchObject({
      event_type: 'transaction.completed',
      external_id: 'evt_01hv8x2acma2gz1my3x0tt3wv6',
      verified: true,
      verify_detail: expect.stringMatching(/secret #1/),
    });
    expect(event!.headers['paddle-signature']).toBe('«redacted»');
  });

  it('accepts any one of several h1 values and the rotated-out secret; dedupes a redelivery', async () => {
    const body = notification('evt_01hv8x2acma2gz1my3x0tt3ww7', 'subscription.updated');
    const ts = Math.floor(Date.now() / 1000);
    const header = `ts=${ts};h1=${h1('not-the-secret', ts, body)};h1=${h1(OLD_SECRET, ts, body)}`;
    const first = await t.deliver('/webhooks/paddle', body, { 'paddle-signature': header });
    expect(first.status).toBe(200);
    expect((await t.sb.store.getEvent(first.json.id))!.verify_detail).toMatch(/secret #2/);
    const again = await t.deliver('/webhooks/paddle', body, await paddleHeaders(body));
    expect(again.json).toEqual({ id: first.json.id, duplicate: true });
  });

  it('rejects stale and future timestamps with the skew in the hint', async () => {
    const body = notification('evt_stale');
    const stale = await t.deliver('/webhooks/paddle', body, await paddleHeaders(body, { ts: Math.floor(Date.now() / 1000) - 600 }));
    expect(stale).toMatchObject({ status: 401, json: { error: 'timestamp_out_of_tolerance', hint: expect.stringMatching(/60\d s in the past/) } });
    const future = await t.deliver('/webhooks/paddle', body, await paddleHeaders(body, { ts: Math.floor(Date.now() / 1000) + 600 }));
    expect(future).toMatchObject({ status: 401, json: { error: 'timestamp_out_of_tolerance', hint: expect.stringMatching(/in the future/) } });
  });

  it('rejects a wrong secret, a re-serialized body and malformed headers', async () => {
    const body = notification('evt_bad');
    const wrong = await t.deliver('/webhooks/paddle', body, await paddleHeaders(body, { secret: 'pdl_ntfset_someone_else' }));
    expect(wrong).toMatchObject({ status: 401, json: { error: 'signature_mismatch', hint: expect.stringMatching(/pdl_ntfset_/) } });
    const pretty = await t.deliver('/webhooks/paddle', JSON.stringify(JSON.parse(body), null, 2), await paddleHeaders(body));
    expect(pretty).toMatchObject({ status: 401, json: { error: 'signature_mismatch', hint: expect.stringMatching(/re-serialized/) } });
    expect(await t.deliver('/webhooks/paddle', body, { 'paddle-signature': `h1=${'a'.repeat(64)}` })).toMatchObject({ status: 401, json: { error: 'signature_malformed' } });
    expect(await t.deliver('/webhooks/paddle', body, { 'paddle-signature': `ts=${Math.floor(Date.now() / 1000)};h1=xyz` })).toMatchObject({
      status: 401,
      json: { error: 'signature_malformed', hint: expect.stringMatching(/h1=/) },
    });
    expect(await t.deliver('/webhooks/paddle', body, {})).toMatchObject({ status: 401, json: { error: 'signature_missing' } });
  });

  it('replays re-signed so that the Paddle SDK unmarshals what the consumer got', async () => {
    // A type the SDK has no entity class for, so unmarshal() judges the signature, not our sample data.
    const body = notification('evt_replayed', 'switchboard.sample');
    const answer = await t.deliver('/webhooks/paddle', body, await paddleHeaders(body, { ts: Math.floor(Date.now() / 1000) - 200 }));
    expect(answer.status).toBe(200);
    const received = await replayToConsumer(t, answer.json.id);
    expect(received.body.toString()).toBe(body);
    const event = await paddle.webhooks.unmarshal(received.body.toString(), SECRET, received.headers['paddle-signature']!);
    expect(event).toMatchObject({ eventId: 'evt_replayed', eventType: 'switchboard.sample' });
    expect(await paddle.webhooks.isSignatureValid(received.body.toString(), SECRET, received.headers['paddle-signature']!)).toBe(true);
  });

  it('keeps the secrets and signatures out of stored rows and logs', async () => {
    await expectNothingLeaked(t, 'paddle', [SECRET, OLD_SECRET, ...sent]);
  });
});

describe('paddle verifier', () => {
  const ts = 1_764_460_800;
  const body = '{"event_id":"evt_1","event_type":"customer.created"}';
  const verifyAt = (nowS: number) =>
    paddleVerifier.verify(delivery(body, { 'paddle-signature': `ts=${ts};h1=${h1(SECRET, ts, body)}` }, { nowMs: nowS * 1000 }), { secrets: [SECRET], toleranceS: 300 });

  it('holds the tolerance in both directions', () => {
    expect(verifyAt(ts + 300).ok).toBe(true);
    expect(verifyAt(ts - 300).ok).toBe(true);
    expect(verifyAt(ts + 301)).toMatchObject({ ok: false, reason: 'timestamp_out_of_tolerance' });
    expect(verifyAt(ts - 301)).toMatchObject({ ok: false, reason: 'timestamp_out_of_tolerance' });
  });

  it('signs what the SDK accepts', async () => {
    const signed = paddleVerifier.sign!({ body: Buffer.from(body), secret: SECRET, nowMs: Date.now(), headers: {}, publicUrl: null });
    expect(await paddle.webhooks.isSignatureValid(body, SECRET, signed['paddle-signature']!)).toBe(true);
    expect(await paddle.webhooks.isSignatureValid(body, OLD_SECRET, signed['paddle-signature']!)).toBe(false);
  });
});
