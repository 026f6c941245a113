import { createHmac } from 'node:crypto';
import { LinearWebhookClient } from '@linear/sdk/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linearVerifier } from '../../../src/core/providers/linear.js';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { delivery, expectNothingLeaked, replayToConsumer } from '../../helpers/providers.js';

const SECRET = 'lin_wh_4f8a2c1e9b7d6f3a0c5e8b2d4f6a1c3e';
const OLD_SECRET = 'lin_wh_previous_0011223344556677';

let t: TestSwitchboard;
let pinnedNowMs: number | undefined;
const sent: string[] = [];

beforeAll(async () => {
  t = await startTestSwitchboard(
    { providers: [{ name: 'linear', kind: 'linear', secrets: [{ env: 'LINEAR_SECRET' }, { value: OLD_SECRET }] }] },
    { env: { LINEAR_SECRET: SECRET }, now: () => pinnedNowMs ?? Date.now() },
  );
});
afterAll(() => t?.close());

/** A Linear payload the way Linear writes it: webhookTimestamp (ms) last, inside the signed body. */
function issueBody(action: string, timestampMs = Date.now()): string {
  return JSON.stringify({
    action,
    type: 'Issue',
    createdAt: new Date(timestampMs).toISOString(),
    data: { id: '2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9', title: 'Replay crashes on binary bodies', priority: 2 },
    url: 'https://linear.app/acme/issue/ENG-42',
    organizationId: 'b0d8c1e0-0000-4000-8000-000000000000',
    webhookTimestamp: timestampMs,
    webhookId: '000042e3-d123-4980-b49f-8e140eef9329',
  });
}

/**
 * Linear's SDK only verifies, so fixtures are signed with HMAC-SHA256 here and must pass the
 * SDK's own check first (for timestamps it accepts) before they tell us anything about ours.
 */
function linearHeaders(body: string, deliveryId: string, secret = SECRET, oracle = true): Record<string, string> {
  const signature = createHmac('sha256', secret).update(body).digest('hex');
  if (oracle) expect(new LinearWebhookClient(secret).verify(Buffer.from(body), signature)).toBe(true);
  sent.push(signature);
  return { 'content-type': 'application/json; charset=utf-8', 'linear-signature': signature, 'linear-delivery': deliveryId, 'linear-event': 'Issue', 'user-agent': 'Linear-Webhook' };
}

describe('linear through the receiver', () => {
  it('accepts a signed delivery and stores Type.action and the delivery id', async () => {
    const body = issueBody('create');
    const answer = await t.deliver('/webhooks/linear', body, linearHeaders(body, '234d1a4e-b617-4388-90fe-adc3633d6b72'));
    expect(answer).toMatchObject({ status: 200, json: { duplicate: false } });
    const event = await t.sb.store.getEvent(answer.json.id);
    expect(event).toMatchObject({
      event_type: 'Issue.create',
      external_id: '234d1a4e-b617-4388-90fe-adc3633d6b72',
      verified: true,
      verify_detail: expect.stringMatching(/secret #1/),
    });
    expect(event!.headers['linear-signature']).toBe('«redacted»');
  });

  it('accepts the rotated-out secret and dedupes a redelivery', async () => {
    const body = issueBody('update');
    const first = await t.deliver('/webhooks/linear', body, linearHeaders(body, 'rotated-1', OLD_SECRET));
    expect(first.status).toBe(200);
    expect((await t.sb.store.getEvent(first.json.id))!.verify_detail).toMatch(/secret #2/);
    const again = await t.deliver('/webhooks/linear', body, linearHeaders(body, 'rotated-1', OLD_SECRET));
    expect(again.json).toEqual({ id: first.json.id, duplicate: true });
  });

  it('rejects a stale or future webhookTimestamp, and a body without one', async () => {
    const stale = issueBody('remove', Date.now() - 120_000);
    expect(await t.deliver('/webhooks/linear', stale, linearHeaders(stale, 'stale-1', SECRET, false))).toMatchObject({
      status: 401,
      json: { error: 'timestamp_out_of_tolerance', hint: expect.stringMatching(/12\d s in the past \(tolerance 60 s\)/) },
    });
    const future = issueBody('remove', Date.now() + 90_000);
    expect(await t.deliver('/webhooks/linear', future, linearHeaders(future, 'future-1', SECRET, false))).toMatchObject({
      status: 401,
      json: { error: 'timestamp_out_of_tolerance', hint: expect.stringMatching(/in the future/) },
    });
    const untimed = '{"action":"create","type":"Comment"}';
    expect(await t.deliver('/webhooks/linear', untimed, linearHeaders(untimed, 'untimed-1', SECRET, false))).toMatchObject({
      status: 401,
      json: { error: 'timestamp_missing' },
    });
  });

  it('rejects a wrong secret, a re-serialized body, a malformed and a missing signature', async () => {
    const body = issueBody('create');
    const wrong = await t.deliver('/webhooks/linear', body, linearHeaders(body, 'wrong-1', 'lin_wh_someone_else'));
    expect(wrong).toMatchObject({ status: 401, json: { error: 'signature_mismatch', hint: expect.stringMatching(/signing secret/) } });
    const pretty = await t.deliver('/webhooks/linear', JSON.stringify(JSON.parse(body), null, 2), linearHeaders(body, 'pretty-1'));
    expect(pretty).toMatchObject({ status: 401, json: { error: 'signature_mismatch', hint: expect.stringMatching(/re-serialized/) } });
    const malformed = await t.deliver('/webhooks/linear', body, { 'linear-signature': 'sha256=abc' });
    expect(malformed).toMatchObject({ status: 401, json: { error: 'signature_malformed' } });
    expect(await t.deliver('/webhooks/linear', body, {})).toMatchObject({ status: 401, json: { error: 'signature_missing' } });
  });

  it('replays an old delivery with a fresh webhookTimestamp, re-signed so LinearWebhookClient accepts it', async () => {
    const receivedAtMs = Date.now() - 3600_000;
    const body = issueBody('create', receivedAtMs);
    pinnedNowMs = receivedAtMs + 1000; // it was on time when it arrived, an hour ago
    let answer;
    try {
      answer = await t.deliver('/webhooks/linear', body, linearHeaders(body, 'replayed-1', SECRET, false));
    } finally {
      pinnedNowMs = undefined;
    }
    expect(answer.status).toBe(200);
    const received = await replayToConsumer(t, answer.json.id);
    const client = new LinearWebhookClient(SECRET);
    const payload = client.parseData(received.body, received.headers['linear-signature']!);
    expect(payload.webhookTimestamp).toBeGreaterThan(Date.now() - 10_000);
    // Only the timestamp changed: everything else is byte for byte what Linear sent.
    expect(received.body.toString()).toBe(body.replace(String(receivedAtMs), String(payload.webhookTimestamp)));
    expect(received.headers).toMatchObject({ 'linear-delivery': 'replayed-1', 'linear-event': 'Issue' });
  });

  it('keeps the secrets and signatures out of stored rows and logs', async () => {
    await expectNothingLeaked(t, 'linear', [SECRET, OLD_SECRET, ...sent]);
  });
});

describe('linear verifier', () => {
  const at = 1_764_460_800_000;
  const verifyAt = (nowMs: number) => {
    const body = issueBody('create', at);
    const signature = createHmac('sha256', SECRET).update(body).digest('hex');
    return linearVerifier.verify(delivery(body, { 'linear-signature': signature }, { nowMs }), { secrets: [SECRET], toleranceS: 60 });
  };

  it('holds the 60 s tolerance in both directions', () => {
    expect(verifyAt(at + 60_000).ok).toBe(true);
    expect(verifyAt(at - 60_000).ok).toBe(true);
    expect(verifyAt(at + 61_000)).toMatchObject({ ok: false, reason: 'timestamp_out_of_tolerance' });
    expect(verifyAt(at - 61_000)).toMatchObject({ ok: false, reason: 'timestamp_out_of_tolerance' });
    expect(linearVerifier.defaultToleranceS).toBe(60);
  });

  it('refreshBody touches only the top-level webhookTimestamp and leaves other bodies alone', () => {
    const body = Buffer.from('{"type":"Issue","data":{"note":"webhookTimestamp"},\n  "webhookTimestamp" : 1700000000000}');
    expect(linearVerifier.refreshBody!(body, 1800000000123).toString()).toBe('{"type":"Issue","data":{"note":"webhookTimestamp"},\n  "webhookTimestamp" : 1800000000123}');
    const nested = Buffer.from('{"data":{"webhookTimestamp":1},"type":"Issue"}');
    expect(linearVerifier.refreshBody!(nested, 5).equals(nested)).toBe(true);
    const binary = Buffer.from([0xff, 0x00, 0x7b]);
    expect(linearVerifier.refreshBody!(binary, 5).equals(binary)).toBe(true);
  });
});
