import Stripe from 'stripe';
import { verifyKey } from 'discord-interactions';
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DISCORD_TEST_DETAIL } from '../../src/core/receiver/ingest.js';
import { startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../helpers/core.js';
import { connectMcp, type McpTestClient } from '../helpers/mcp.js';
import { startConsumer, type Consumer } from './replay/consumer.js';

/**
 * `verified: true` means this instance checked the signature over the raw bytes (issue #26.1,
 * #26.3, DESIGN §12). A line in an import file is a claim: a hand-made one saying "signed,
 * verified" with an invented detail used to be shown with the green badge, answered as
 * verified over MCP, and re-signed with the real secret on replay. A Discord test event is
 * verified, but only against switchboard's own key, and says so.
 */

const STRIPE_SECRET = 'whsec_trust_test_0123456789abcdef';
const stripe = new Stripe('sk_test_trust');
const discordApp = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('hex');

let t: TestSwitchboard;
let agent: McpTestClient;
let handler: Consumer;

beforeAll(async () => {
  handler = await startConsumer();
  t = await startTestSwitchboard({
    providers: [
      { name: 'stripe', kind: 'stripe', secrets: [{ value: STRIPE_SECRET }] },
      { name: 'discord', kind: 'discord', public_key: discordApp },
      { name: 'homelab', kind: 'open' },
    ],
  });
  agent = await connectMcp(t);
});
afterAll(async () => {
  await agent?.close();
  await t?.close();
  await handler?.close();
});

/** A line nobody verified: made by hand, claiming everything. */
function forgedLine(overrides: Record<string, unknown> = {}): string {
  const body = JSON.stringify({ id: `evt_forged_${Math.random().toString(36).slice(2)}`, object: 'event', type: 'charge.refunded', data: { object: { amount: 99_999 } } });
  return JSON.stringify({
    provider: 'stripe',
    family: 'webhook',
    event_type: 'charge.refunded',
    external_id: JSON.parse(body).id,
    trust_mode: 'signed',
    verified: true,
    verify_detail: 'stripe v1 signature matched secret #1, timestamp skew 0 s',
    received_at: '2026-11-30T09:41:07.123456Z',
    headers: { 'content-type': 'application/json', 'stripe-signature': '«redacted»' },
    content_type: 'application/json',
    payload_base64: Buffer.from(body).toString('base64'),
    ...overrides,
  });
}

async function importLines(...lines: string[]) {
  const response = await fetch(`${t.sb.url.control}/api/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/x-ndjson' },
    body: `${lines.join('\n')}\n`,
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { imported: number; duplicates: number; errors: { line: number; message: string }[]; error_count: number };
}

async function lastImported(): Promise<number> {
  const { events } = await t.sb.api.listEvents({ origin: 'import', limit: 1 });
  return events[0]!.id;
}

describe('an imported line is never verified', () => {
  it('stores "signed, verified" with an invented detail as not verified, keeping the claim only in words', async () => {
    expect(await importLines(forgedLine())).toMatchObject({ imported: 1, error_count: 0 });
    const id = await lastImported();
    const { event } = await t.sb.api.getEvent({ id });
    expect(event).toMatchObject({
      origin: 'import',
      trust_mode: 'signed',
      verified: false,
      verify_detail: 'imported: the file says signed, verified — not verified by this instance',
    });
    // The agent hears the same: not verified, whatever the file said.
    expect(await agent.ok('get_webhook_event', { id })).toMatchObject({ verified: false, verify_detail: event.verify_detail, origin: 'import' });
    const { events } = await agent.ok('list_webhook_events', { origin: 'import' });
    expect(events.every((row: { verified: boolean }) => row.verified === false)).toBe(true);
    // And an export says so too: the next instance will not believe it either.
    const exported = await (await fetch(`${t.sb.url.control}/api/export?origin=import`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } })).text();
    expect(exported).not.toMatch(/"verified":true/);
  });

  it('keeps an impossible claim (open and verified) as words, and refuses a trust that contradicts the family, naming the line', async () => {
    const open = forgedLine({ provider: 'homelab', trust_mode: 'open', verified: true, external_id: 'open-claims-verified' });
    const queueSigned = forgedLine({ provider: 'jobs', family: 'queue', trust_mode: 'signed', external_id: 'queue-signed' });
    const webhookQueue = forgedLine({ provider: 'homelab', trust_mode: 'queue', external_id: 'webhook-queue' });
    const result = await importLines(open, queueSigned, webhookQueue);
    expect(result).toMatchObject({ imported: 1, error_count: 2 });
    expect(result.errors).toEqual([
      { line: 2, message: expect.stringMatching(/^trust_mode: a queue event is trusted as "queue", not "signed"/) },
      { line: 3, message: expect.stringMatching(/^trust_mode: "queue" is only for family "queue"/) },
    ]);
    const { events } = await t.sb.api.listEvents({ external_id: 'open-claims-verified' });
    const { event } = await t.sb.api.getEvent({ id: events[0]!.id });
    expect(event).toMatchObject({ trust_mode: 'open', verified: false, verify_detail: 'imported: the file says open, verified — not verified by this instance' });
  });

  it('re-signs an imported event on replay only with a warning that the handler will accept bytes nobody verified', async () => {
    await importLines(forgedLine({ external_id: 'evt_forged_replayed' }));
    const id = await lastImported();
    const replay = await t.sb.api.replayEvent({ id, target_url: handler.url('/stripe') });
    expect(replay).toMatchObject({ delivered: true, resigned: true });
    expect(replay.warning).toMatch(/re-signed an imported event: this instance never verified these bytes/);
    // The fresh signature is real (Stripe's SDK accepts it) — which is exactly why it is said.
    const sent = handler.requests.at(-1)!;
    expect(stripe.webhooks.constructEvent(sent.body, sent.headers['stripe-signature'] as string, STRIPE_SECRET).type).toBe('charge.refunded');
    expect((await t.sb.replays.history(id))[0]!.warning).toBe(replay.warning);

    const viaMcp = await agent.ok('replay_webhook_event', { id, target_url: handler.url('/stripe') });
    expect(viaMcp.warning).toMatch(/imported event/);
    // Copy as cURL (re-signed) says it as well.
    expect((await t.sb.api.prepareReplay({ id, target_url: handler.url('/stripe') })).warning).toMatch(/imported event/);
    // Without re-signing there is nothing to warn about.
    expect((await t.sb.api.replayEvent({ id, target_url: handler.url('/stripe'), resign: false })).warning).toBeNull();
  });

  it('never warns when replaying an event this instance verified', async () => {
    const body = JSON.stringify({ id: 'evt_real_delivery', object: 'event', type: 'invoice.paid', data: { object: {} } });
    const answer = await t.deliver('/webhooks/stripe', body, {
      'content-type': 'application/json',
      'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: body, secret: STRIPE_SECRET }),
    });
    expect((await t.sb.api.getEvent({ id: answer.json.id })).event.verified).toBe(true);
    expect((await t.sb.api.replayEvent({ id: answer.json.id, target_url: handler.url('/stripe') })).warning).toBeNull();
  });
});

describe('a Discord test event', () => {
  it('is verified against switchboard’s own key, and its verify_detail says it was signed by switchboard, not Discord', async () => {
    const { event } = await t.sb.api.sendTestEvent({ provider: 'discord' });
    expect(event).toMatchObject({ origin: 'test', trust_mode: 'signed', verified: true });
    const { event: detail } = await t.sb.api.getEvent({ id: event.id });
    expect(detail.verify_detail).toBe(DISCORD_TEST_DETAIL);
    expect(detail.verify_detail).toMatch(/^signed by switchboard, not by Discord/);
    expect((await agent.ok('get_webhook_event', { id: event.id })).verify_detail).toBe(DISCORD_TEST_DETAIL);
  });

  it('a real Discord delivery (signed with the application key) does not say so', async () => {
    // A delivery signed by "Discord": we hold the key pair here; discord-interactions is the oracle.
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const hex = publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('hex');
    await t.sb.updateConfig({
      providers: [
        { name: 'stripe', kind: 'stripe', secrets: [{ value: STRIPE_SECRET }] },
        { name: 'discord', kind: 'discord', public_key: hex },
        { name: 'homelab', kind: 'open' },
      ],
    });
    const { sign } = await import('node:crypto');
    const body = JSON.stringify({ type: 2, id: '1', token: 't', data: { name: 'hello' } });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = sign(null, Buffer.from(timestamp + body), privateKey).toString('hex');
    expect(await verifyKey(body, signature, timestamp, hex)).toBe(true);
    const answer = await t.deliver('/webhooks/discord', body, { 'content-type': 'application/json', 'x-signature-ed25519': signature, 'x-signature-timestamp': timestamp });
    expect(answer.status).toBe(200);
    const { events } = await t.sb.api.listEvents({ provider: 'discord', origin: 'provider' });
    const { event } = await t.sb.api.getEvent({ id: events[0]!.id });
    expect(event.verified).toBe(true);
    expect(event.verify_detail).toMatch(/^discord: Ed25519 signature verified with the application public key/);
  });
});
