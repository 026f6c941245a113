import { execFile } from 'node:child_process';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCurl } from '../../../src/renderer/src/lib/curl.js';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { startConsumer, type Consumer } from '../replay/consumer.js';

/**
 * "Copy as cURL (re-signed)": the API builds the request a replay would send, with a fresh
 * signature, without sending it; the UI turns it into a command. Run in a real shell against a
 * real listener, Stripe's own constructEvent must accept what arrives.
 */

const SECRET = 'whsec_prepare_replay_0123456789abcdef';
let t: TestSwitchboard;
let consumer: Consumer;

beforeAll(async () => {
  consumer = await startConsumer('127.0.0.1');
  t = await startTestSwitchboard({ providers: [{ name: 'stripe', kind: 'stripe', secrets: [{ value: SECRET }] }, { name: 'open', kind: 'open' }] });
});
afterAll(async () => {
  await t?.close();
  await consumer?.close();
});

const sh = (command: string) =>
  new Promise<void>((resolve, reject) => execFile('sh', ['-c', `${command} --silent --show-error --output /dev/null`], (error) => (error ? reject(error) : resolve())));

describe('prepareReplay', () => {
  it('returns a freshly re-signed request, and sends nothing', async () => {
    const { event } = await t.sb.api.sendTestEvent({ provider: 'stripe', event_type: 'payment_intent.succeeded' });
    const before = consumer.requests.length;
    const prepared = await t.sb.api.prepareReplay({ id: event.id, target_url: consumer.url('/stripe') });
    expect(prepared).toMatchObject({ target_url: consumer.url('/stripe'), resigned: true, warning: null, payload_encoding: 'utf8' });
    expect(prepared.headers['stripe-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(consumer.requests.length).toBe(before);
    expect(await t.sb.api.listReplays({ event_id: event.id })).toEqual({ replays: [] });

    const next = consumer.nextRequest();
    await sh(buildCurl({ url: prepared.target_url, headers: prepared.headers, payload: prepared.payload, encoding: prepared.payload_encoding }));
    const received = await next;
    const parsed = new Stripe('sk_test_unused').webhooks.constructEvent(received.body, String(received.headers['stripe-signature']), SECRET);
    expect(parsed.type).toBe('payment_intent.succeeded');
  });

  it('says so when re-signing is impossible', async () => {
    const { event } = await t.sb.api.sendTestEvent({ provider: 'open' });
    const prepared = await t.sb.api.prepareReplay({ id: event.id, target_url: consumer.url('/open') });
    expect(prepared.resigned).toBe(false);
    expect(prepared.warning).toMatch(/cannot be re-signed/);
  });

  it('refuses a target the replay guard refuses', async () => {
    const { event } = await t.sb.api.sendTestEvent({ provider: 'stripe' });
    await expect(t.sb.api.prepareReplay({ id: event.id, target_url: 'http://169.254.169.254/latest' })).rejects.toMatchObject({ code: 'invalid_argument' });
  });
});
