import { createHmac, generateKeyPairSync, sign as ed25519Sign } from 'node:crypto';
import { verifyKey } from 'discord-interactions';
import '@shopify/shopify-api/adapters/web-api';
import { getHmac } from '@shopify/shopify-api/test-helpers';
import { LinearWebhookClient } from '@linear/sdk/webhooks';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import Stripe from 'stripe';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';

/**
 * What a captured delivery is worth to whoever captured it (docs/security.md, "Replay of a
 * captured delivery"). Schemes that sign neither a delivery id nor a time cannot tell a re-sent
 * capture from a new delivery: the bytes and signature are re-sent under a new delivery id and
 * must come out as a new verified event *that says so*. Schemes that sign a time and an id must
 * not. Every request is signed by the provider's own library.
 */

const GITHUB = 'gh-secret-replay-protection-01';
const SHOPIFY = 'shpss_replay_protection_0123456789ab';
const TWILIO = '0123456789abcdef0123456789abcdef';
const LINEAR = 'lin_wh_replay_protection_0123456789';
const STRIPE = 'whsec_replay_protection_0123456789abcdef';
const STANDARD = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const PUBLIC_URL = 'https://replay-protection.ngrok.app';
const NOTE = /no replay protection in this scheme: \w+ signs neither a delivery id nor a time/;

const discordKeys = generateKeyPairSync('ed25519');
const DISCORD_PUBLIC_KEY = discordKeys.publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex');

let t: TestSwitchboard;

beforeAll(async () => {
  t = await startTestSwitchboard({
    receiver: { public_url: PUBLIC_URL },
    providers: [
      { name: 'github', kind: 'github', secrets: [{ value: GITHUB }] },
      { name: 'shopify', kind: 'shopify', secrets: [{ value: SHOPIFY }] },
      { name: 'twilio', kind: 'twilio', secrets: [{ value: TWILIO }] },
      { name: 'linear', kind: 'linear', secrets: [{ value: LINEAR }] },
      { name: 'stripe', kind: 'stripe', secrets: [{ value: STRIPE }] },
      { name: 'standard', kind: 'standard-webhooks', secrets: [{ value: STANDARD }] },
      { name: 'token', kind: 'token', secrets: [{ value: 'shared-token-replay-protection' }] },
      { name: 'open', kind: 'open' },
      { name: 'discord', kind: 'discord', public_key: DISCORD_PUBLIC_KEY },
    ],
  });
});
afterAll(() => t?.close());

/** Sends a capture twice more: once as the sender's own retry (same id), once under a new id. */
async function resend(path: string, body: string, headers: Record<string, string>, idHeader: string) {
  const first = await t.deliver(path, body, headers);
  expect(first, first.text).toMatchObject({ status: 200, json: { duplicate: false } });
  const retry = await t.deliver(path, body, headers);
  const renamed = await t.deliver(path, body, { ...headers, [idHeader]: `${headers[idHeader]}-captured` });
  const detail = (await t.sb.store.getEvent(first.json.id))!.verify_detail;
  return { first, retry, renamed, detail };
}

describe('schemes that sign neither an id nor a time', () => {
  it('github: a capture re-sent with a new X-GitHub-Delivery is a new verified event, and the event says so', async () => {
    const body = JSON.stringify({ action: 'opened', number: 7 });
    const headers = { 'content-type': 'application/json', 'x-github-event': 'pull_request', 'x-github-delivery': 'b7d5c0a0-0000-4000-8000-000000000001', 'x-hub-signature-256': await githubSign(GITHUB, body) };
    const { first, retry, renamed, detail } = await resend('/webhooks/github', body, headers, 'x-github-delivery');
    expect(retry.json).toEqual({ id: first.json.id, duplicate: true });
    expect(renamed).toMatchObject({ status: 200, json: { duplicate: false } });
    expect(renamed.json.id).not.toBe(first.json.id);
    expect(detail).toMatch(NOTE);
    expect(detail).toContain('X-GitHub-Delivery');
    expect((await t.sb.store.getEvent(renamed.json.id))!.verified).toBe(true);
  });

  it('shopify: the same with a new X-Shopify-Webhook-Id', async () => {
    const body = JSON.stringify({ id: 820982911946154500, total_price: '403.00' });
    const headers = { 'content-type': 'application/json', 'x-shopify-topic': 'orders/create', 'x-shopify-webhook-id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043', 'x-shopify-hmac-sha256': getHmac(body, SHOPIFY) };
    const { first, retry, renamed, detail } = await resend('/webhooks/shopify', body, headers, 'x-shopify-webhook-id');
    expect(retry.json).toEqual({ id: first.json.id, duplicate: true });
    expect(renamed).toMatchObject({ status: 200, json: { duplicate: false } });
    expect(detail).toMatch(NOTE);
    expect(detail).toContain('X-Shopify-Webhook-Id');
  });

  it('twilio: the same with a new I-Twilio-Idempotency-Token', async () => {
    const params = { AccountSid: 'AC00000000000000000000000000000001', MessageSid: 'SM000000000000000000000000000replay', MessageStatus: 'delivered' };
    const body = new URLSearchParams(params).toString();
    const signature = twilio.getExpectedTwilioSignature(TWILIO, `${PUBLIC_URL}/webhooks/twilio`, params);
    const headers = { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature, 'i-twilio-idempotency-token': 'idem-0001' };
    const { first, retry, renamed, detail } = await resend('/webhooks/twilio', body, headers, 'i-twilio-idempotency-token');
    expect(retry.json).toEqual({ id: first.json.id, duplicate: true });
    expect(renamed).toMatchObject({ status: 200, json: { duplicate: false } });
    expect(detail).toMatch(NOTE);
  });

  it('token and open kinds say it too', async () => {
    const token = await t.deliver('/webhooks/token', '{}', { authorization: 'Bearer shared-token-replay-protection' });
    const open = await t.deliver('/webhooks/open', '{}');
    for (const answer of [token, open]) {
      expect(answer.status).toBe(200);
      expect((await t.sb.store.getEvent(answer.json.id))!.verify_detail).toMatch(/no replay protection in this scheme/);
    }
  });
});

describe('schemes that sign a time', () => {
  it('linear signs a time but not its delivery id: replays are bounded to the window, and the event says so', async () => {
    const body = JSON.stringify({ action: 'create', type: 'Issue', data: { id: 'replay-1' }, webhookTimestamp: Date.now() });
    const signature = createHmac('sha256', LINEAR).update(body).digest('hex');
    expect(new LinearWebhookClient(LINEAR).verify(Buffer.from(body), signature)).toBe(true);
    const headers = { 'content-type': 'application/json', 'linear-signature': signature, 'linear-delivery': 'd-0001', 'linear-event': 'Issue' };
    const { renamed, detail } = await resend('/webhooks/linear', body, headers, 'linear-delivery');
    expect(renamed).toMatchObject({ status: 200, json: { duplicate: false } });
    expect(detail).toMatch(/replay window only: within ±60 s a captured delivery re-sent with a new Linear-Delivery is a new verified event/);
    expect(detail).not.toMatch(NOTE);
  });

  it('stripe signs the time and the body carries the id: a re-sent capture is a duplicate', async () => {
    const body = JSON.stringify({ id: 'evt_replay_protection_1', type: 'invoice.paid', object: 'event' });
    const header = new Stripe('sk_test_unused').webhooks.generateTestHeaderString({ payload: body, secret: STRIPE });
    const first = await t.deliver('/webhooks/stripe', body, { 'content-type': 'application/json', 'stripe-signature': header });
    const again = await t.deliver('/webhooks/stripe', body, { 'content-type': 'application/json', 'stripe-signature': header });
    expect(again.json).toEqual({ id: first.json.id, duplicate: true });
    expect((await t.sb.store.getEvent(first.json.id))!.verify_detail).not.toMatch(/replay/);
  });

  it('standard webhooks sign the id: a capture under a new webhook-id is refused', async () => {
    const body = JSON.stringify({ type: 'user.created', data: { id: 'u1' } });
    const id = 'msg_replay_protection_1';
    const at = new Date();
    const headers = { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new StandardWebhook(STANDARD).sign(id, at, body) };
    expect(await t.deliver('/webhooks/standard', body, headers)).toMatchObject({ status: 200 });
    expect(await t.deliver('/webhooks/standard', body, { ...headers, 'webhook-id': 'msg_captured' })).toMatchObject({ status: 401, json: { error: 'signature_mismatch' } });
  });

  it('discord: an interaction carries a signed id (a re-sent capture is a duplicate); a webhook event has none, and says so', async () => {
    const headers = async (body: string) => {
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = ed25519Sign(null, Buffer.from(`${timestamp}${body}`), discordKeys.privateKey).toString('hex');
      expect(await verifyKey(body, signature, timestamp, DISCORD_PUBLIC_KEY)).toBe(true);
      return { 'content-type': 'application/json', 'x-signature-ed25519': signature, 'x-signature-timestamp': timestamp };
    };
    const interaction = JSON.stringify({ id: '1184739283746128400', type: 2, data: { name: 'deploy' } });
    const interactionHeaders = await headers(interaction);
    const first = await t.deliver('/webhooks/discord', interaction, interactionHeaders);
    expect(first.status).toBe(200);
    expect((await t.deliver('/webhooks/discord', interaction, interactionHeaders)).status).toBe(200);
    expect((await t.sb.store.listEvents({ provider: 'discord', event_type: 'APPLICATION_COMMAND deploy', limit: 5 })).items).toHaveLength(1);

    const event = JSON.stringify({ version: 1, application_id: '1184739283746120000', type: 1, event: { type: 'APPLICATION_AUTHORIZED', timestamp: new Date().toISOString(), data: {} } });
    const eventHeaders = await headers(event);
    expect((await t.deliver('/webhooks/discord', event, eventHeaders)).status).toBe(204);
    expect((await t.deliver('/webhooks/discord', event, eventHeaders)).status).toBe(204);
    const stored = await t.sb.store.listEvents({ provider: 'discord', event_type: 'APPLICATION_AUTHORIZED', limit: 5 });
    expect(stored.items).toHaveLength(2);
    expect((await t.sb.store.getEvent(stored.items[0]!.id))!.verify_detail).toMatch(/replay window only: webhook events carry no id, so within ±300 s a captured delivery re-sent is a new verified event/);
  });
});
