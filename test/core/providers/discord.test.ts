import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { verifyKey } from 'discord-interactions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discordVerifier } from '../../../src/core/providers/discord.js';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { delivery, expectNothingLeaked, replayToConsumer } from '../../helpers/providers.js';

/** The application's key pair: Discord keeps the private half, the portal shows the public one. */
function keyPair(): { privateKey: KeyObject; publicKeyHex: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  // The raw 32-byte key is the tail of its SPKI encoding.
  return { privateKey, publicKeyHex: publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex') };
}

const app = keyPair();
const stranger = keyPair();
const sent: string[] = [];

let t: TestSwitchboard;

beforeAll(async () => {
  t = await startTestSwitchboard({
    providers: [
      { name: 'discord', kind: 'discord', public_key: app.publicKeyHex },
      { name: 'discord-nokey', kind: 'discord' },
    ],
  });
});
afterAll(() => t?.close());

/**
 * Signs like Discord (Ed25519 over timestamp + body) with node:crypto; a fixture signed by the
 * application's key must pass discord-interactions' verifyKey before it tests anything of ours.
 */
async function discordHeaders(body: string, { key = app.privateKey, timestamp = Math.floor(Date.now() / 1000) } = {}): Promise<Record<string, string>> {
  const signature = sign(null, Buffer.from(`${timestamp}${body}`), key).toString('hex');
  const valid = await verifyKey(body, signature, String(timestamp), app.publicKeyHex);
  expect(valid).toBe(key === app.privateKey);
  sent.push(signature);
  return { 'content-type': 'application/json', 'x-signature-ed25519': signature, 'x-signature-timestamp': String(timestamp) };
}

describe('discord through the receiver', () => {
  it('answers the interactions PING with a PONG and stores it', async () => {
    const body = '{"type":1}';
    const answer = await t.deliver('/webhooks/discord', body, await discordHeaders(body));
    expect(answer).toMatchObject({ status: 200, json: { type: 1 } });
    const page = await t.sb.store.listEvents({ provider: 'discord', event_type: 'PING', limit: 5 });
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ trust_mode: 'signed', verified: true });
  });

  it('stores a slash command as "APPLICATION_COMMAND <name>" with the interaction id', async () => {
    const body = JSON.stringify({
      id: '1184739283746128394',
      application_id: '1184739283746120000',
      type: 2,
      token: 'aW50ZXJhY3Rpb246MTE4NDczOTI4Mzc0NjEyODM5NA',
      version: 1,
      data: { id: '1184739283746125555', name: 'deploy', type: 1, options: [{ name: 'env', type: 3, value: 'staging' }] },
    });
    const answer = await t.deliver('/webhooks/discord', body, await discordHeaders(body));
    expect(answer).toMatchObject({ status: 200, json: { duplicate: false } });
    const event = await t.sb.store.getEvent(answer.json.id);
    expect(event).toMatchObject({ event_type: 'APPLICATION_COMMAND deploy', external_id: '1184739283746128394', verify_detail: expect.stringMatching(/Ed25519/) });
    expect(event!.headers['x-signature-ed25519']).toBe('«redacted»');
  });

  it('names components by custom_id', async () => {
    const body = JSON.stringify({ id: '1184739283746128999', type: 3, token: 'tok', version: 1, data: { custom_id: 'approve_release', component_type: 2 } });
    const answer = await t.deliver('/webhooks/discord', body, await discordHeaders(body));
    expect(await t.sb.store.getEvent(answer.json.id)).toMatchObject({ event_type: 'MESSAGE_COMPONENT approve_release' });
  });

  it('acknowledges webhook events (PING type 0 and events) with 204 and stores them', async () => {
    const ping = JSON.stringify({ version: 1, application_id: '1184739283746120000', type: 0 });
    const pingAnswer = await fetch(`${t.sb.url.receiver}/webhooks/discord`, { method: 'POST', body: ping, headers: await discordHeaders(ping) });
    expect(pingAnswer.status).toBe(204);
    expect(pingAnswer.headers.get('content-length')).toBeNull();
    expect(await pingAnswer.text()).toBe('');
    const event = JSON.stringify({
      version: 1,
      application_id: '1184739283746120000',
      type: 1,
      event: { type: 'APPLICATION_AUTHORIZED', timestamp: new Date().toISOString(), data: { integration_type: 0, scopes: ['applications.commands'] } },
    });
    const eventAnswer = await t.deliver('/webhooks/discord', event, await discordHeaders(event));
    expect(eventAnswer.status).toBe(204);
    const stored = await t.sb.store.listEvents({ provider: 'discord', event_type: 'APPLICATION_AUTHORIZED', limit: 5 });
    expect(stored.items).toHaveLength(1);
  });

  it('refuses Discord\'s probe with a bad signature, another key, a re-serialized body, malformed and missing headers', async () => {
    const body = '{"type":2,"id":"1","data":{"name":"x"}}';
    const good = await discordHeaders(body);
    const flipped = good['x-signature-ed25519']!.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    expect(await t.deliver('/webhooks/discord', body, { ...good, 'x-signature-ed25519': flipped })).toMatchObject({ status: 401, json: { error: 'signature_mismatch' } });
    const other = await t.deliver('/webhooks/discord', body, await discordHeaders(body, { key: stranger.privateKey }));
    expect(other).toMatchObject({ status: 401, json: { error: 'signature_mismatch', hint: expect.stringMatching(/Public Key/) } });
    const pretty = await t.deliver('/webhooks/discord', JSON.stringify(JSON.parse(body), null, 2), good);
    expect(pretty).toMatchObject({ status: 401, json: { error: 'signature_mismatch', hint: expect.stringMatching(/re-serialized/) } });
    expect(await t.deliver('/webhooks/discord', body, { ...good, 'x-signature-ed25519': 'abc' })).toMatchObject({ status: 401, json: { error: 'signature_malformed' } });
    expect(await t.deliver('/webhooks/discord', body, { 'x-signature-ed25519': good['x-signature-ed25519']! })).toMatchObject({ status: 401, json: { error: 'timestamp_missing' } });
    expect(await t.deliver('/webhooks/discord', body, {})).toMatchObject({ status: 401, json: { error: 'signature_missing' } });
  });

  it('rejects stale and future timestamps', async () => {
    const body = '{"type":1}';
    const stale = await t.deliver('/webhooks/discord', body, await discordHeaders(body, { timestamp: Math.floor(Date.now() / 1000) - 900 }));
    expect(stale).toMatchObject({ status: 401, json: { error: 'timestamp_out_of_tolerance', hint: expect.stringMatching(/90\d s in the past/) } });
    const future = await t.deliver('/webhooks/discord', body, await discordHeaders(body, { timestamp: Math.floor(Date.now() / 1000) + 900 }));
    expect(future).toMatchObject({ status: 401, json: { error: 'timestamp_out_of_tolerance', hint: expect.stringMatching(/in the future/) } });
  });

  it('answers 503 secret_not_configured when the provider has no public_key', async () => {
    const body = '{"type":1}';
    expect(await t.deliver('/webhooks/discord-nokey', body, await discordHeaders(body))).toMatchObject({ status: 503, json: { error: 'secret_not_configured' } });
  });

  it('replays unsigned: re-signing would need Discord\'s private key', async () => {
    expect(discordVerifier.sign).toBeUndefined();
    const body = JSON.stringify({ id: '1184739283746120077', type: 2, token: 't', version: 1, data: { name: 'status' } });
    const answer = await t.deliver('/webhooks/discord', body, await discordHeaders(body));
    const received = await replayToConsumer(t, answer.json.id, '/interactions', { resigned: false });
    expect(received.body.toString()).toBe(body);
    expect(received.headers['x-signature-ed25519']).toBeUndefined();
  });

  it('keeps the signatures out of stored rows and logs', async () => {
    await expectNothingLeaked(t, 'discord', sent);
  });
});

describe('discord verifier', () => {
  const at = 1_764_460_800;
  const body = '{"type":1}';
  const verifyAt = (nowS: number) => {
    const signature = sign(null, Buffer.from(`${at}${body}`), app.privateKey).toString('hex');
    return discordVerifier.verify(delivery(body, { 'x-signature-ed25519': signature, 'x-signature-timestamp': String(at) }, { nowMs: nowS * 1000 }), {
      secrets: [],
      toleranceS: 300,
      publicKey: app.publicKeyHex.toUpperCase(),
    });
  };

  it('holds the tolerance in both directions (and takes the key in either case)', () => {
    expect(verifyAt(at + 300).ok).toBe(true);
    expect(verifyAt(at - 300).ok).toBe(true);
    expect(verifyAt(at + 301)).toMatchObject({ ok: false, reason: 'timestamp_out_of_tolerance' });
    expect(verifyAt(at - 301)).toMatchObject({ ok: false, reason: 'timestamp_out_of_tolerance' });
  });
});
