import { createHash, generateKeyPairSync } from 'node:crypto';
import { sign as githubSign } from '@octokit/webhooks-methods';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESERIALIZATION_MAX_BYTES, RESERIALIZED_HINT } from '../../../src/core/providers/crypto.js';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';

/**
 * Forged deliveries must end as a 401/403 with a rejection row whatever the body, for every
 * signed and token kind; and a forged body must cost about what hashing it costs (the
 * re-serialization diagnosis is skipped above RESERIALIZATION_MAX_BYTES).
 */

const SECRET = 'forged-body-test-secret-0123456789';
const SVIX_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const { publicKey } = generateKeyPairSync('ed25519');
const DISCORD_PUBLIC_KEY = (publicKey.export({ format: 'der', type: 'spki' }) as Buffer).subarray(-32).toString('hex');
const PUBLIC_URL = 'https://forged.example.test';

let t: TestSwitchboard;

beforeAll(async () => {
  t = await startTestSwitchboard({
    receiver: { public_url: PUBLIC_URL, max_body_bytes: 32 * 1024 * 1024 },
    providers: [
      { name: 'github', kind: 'github', secrets: [{ value: SECRET }] },
      { name: 'stripe', kind: 'stripe', secrets: [{ value: SECRET }] },
      { name: 'slack', kind: 'slack', secrets: [{ value: SECRET }] },
      { name: 'shopify', kind: 'shopify', secrets: [{ value: SECRET }] },
      { name: 'svix', kind: 'standard-webhooks', secrets: [{ value: SVIX_SECRET }] },
      { name: 'linear', kind: 'linear', secrets: [{ value: SECRET }] },
      { name: 'paddle', kind: 'paddle', secrets: [{ value: SECRET }] },
      { name: 'discord', kind: 'discord', public_key: DISCORD_PUBLIC_KEY },
      { name: 'twilio', kind: 'twilio', secrets: [{ value: SECRET }] },
      { name: 'gitlab', kind: 'gitlab', secrets: [{ value: SECRET }] },
      { name: 'token', kind: 'token', secrets: [{ value: SECRET }] },
    ],
  });
});
afterAll(() => t?.close());

const now = () => String(Math.floor(Date.now() / 1000));
const hex = (n: number) => '0'.repeat(n);
const base64Digest = `${'A'.repeat(43)}=`;

/** Headers whose signature is well-formed but wrong, so every kind reaches its full check. */
const FORGED: Record<string, { path?: string; headers: () => Record<string, string>; status: number }> = {
  github: { headers: () => ({ 'x-hub-signature-256': `sha256=${hex(64)}`, 'x-github-event': 'push' }), status: 401 },
  stripe: { headers: () => ({ 'stripe-signature': `t=${now()},v1=${hex(64)}` }), status: 401 },
  slack: { headers: () => ({ 'x-slack-signature': `v0=${hex(64)}`, 'x-slack-request-timestamp': now() }), status: 401 },
  shopify: { headers: () => ({ 'x-shopify-hmac-sha256': base64Digest, 'x-shopify-topic': 'orders/create' }), status: 401 },
  svix: { headers: () => ({ 'webhook-id': 'msg_1', 'webhook-timestamp': now(), 'webhook-signature': `v1,${base64Digest}` }), status: 401 },
  linear: { headers: () => ({ 'linear-signature': hex(64) }), status: 401 },
  paddle: { headers: () => ({ 'paddle-signature': `ts=${now()};h1=${hex(64)}` }), status: 401 },
  discord: { headers: () => ({ 'x-signature-ed25519': hex(128), 'x-signature-timestamp': now() }), status: 401 },
  twilio: { headers: () => ({ 'x-twilio-signature': Buffer.alloc(20).toString('base64') }), status: 401 },
  gitlab: { headers: () => ({ 'x-gitlab-token': 'not-the-token-at-all' }), status: 403 },
  token: { headers: () => ({ authorization: 'Bearer not-the-token-at-all' }), status: 403 },
};

const DEPTH = 100_000;
const deepArray = '['.repeat(DEPTH) + ']'.repeat(DEPTH);
const BODIES: Record<string, { body: Buffer; contentType: string }> = {
  'deeply nested arrays': { body: Buffer.from(deepArray), contentType: 'application/json' },
  'deeply nested objects': { body: Buffer.from('{"a":'.repeat(DEPTH) + '1' + '}'.repeat(DEPTH)), contentType: 'application/json' },
  'deep nesting under a key': { body: Buffer.from(`{"type":"x","data":${deepArray}}`), contentType: 'application/json' },
  'a huge flat array': { body: Buffer.from(`[${'1,'.repeat(100_000)}1]`), contentType: 'application/json' },
  'invalid UTF-8': { body: Buffer.from([0x7b, 0x22, 0x74, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d]), contentType: 'application/json' },
  '__proto__ and constructor keys': {
    body: Buffer.from('{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},"type":{"toString":1},"id":"x"}'),
    contentType: 'application/json',
  },
  'numbers that lose precision': { body: Buffer.from('{"id":123456789012345678901234567890,"big":1e400,"tiny":-1e-400,"type":"x"}'), contentType: 'application/json' },
  'NUL and lone surrogates': { body: Buffer.from('{"type":"x\\u0000y","id":"\\ud800"}'), contentType: 'application/json' },
  'a form with a deeply nested payload and broken escapes': {
    body: Buffer.from(`payload=${encodeURIComponent(deepArray)}&command=%ZZ&%E0%A4%A=1&__proto__=x`),
    contentType: 'application/x-www-form-urlencoded',
  },
  'an empty body': { body: Buffer.alloc(0), contentType: 'application/json' },
};

async function rejectionCount(provider: string): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await t.sb.store.listRejections({ provider, limit: 500, ...(cursor ? { cursor } : {}) });
    count += page.items.length;
    cursor = page.next_cursor;
  } while (cursor);
  return count;
}

describe('forged deliveries, whatever the body', () => {
  for (const [provider, forged] of Object.entries(FORGED)) {
    it(`${provider}: every forged body is refused with ${forged.status} and a rejection row`, async () => {
      const logged = t.logger.lines.length;
      for (const [label, { body, contentType }] of Object.entries(BODIES)) {
        const before = await rejectionCount(provider);
        const answer = await t.deliver(`/webhooks/${provider}`, body, { 'content-type': contentType, ...forged.headers() });
        expect({ label, status: answer.status }).toEqual({ label, status: forged.status });
        // The verifier reached a verdict of its own (no internal failure was papered over).
        expect(answer.json.error).not.toBe('verification_failed');
        expect({ label, rows: await rejectionCount(provider) }).toEqual({ label, rows: before + 1 });
      }
      expect(t.logger.lines.slice(logged).filter((line) => line.startsWith('error'))).toEqual([]);
    });
  }

  it('twilio: a validly signed URL whose bodySHA256 does not match a deeply nested body is refused', async () => {
    for (const { body } of Object.values(BODIES)) {
      const url = `${PUBLIC_URL}/webhooks/twilio?bodySHA256=${createHash('sha256').update('something else').digest('hex')}`;
      const signature = twilio.getExpectedTwilioSignature(SECRET, url, {});
      const answer = await t.deliver(`/webhooks/twilio${new URL(url).search}`, body, { 'content-type': 'application/json', 'x-twilio-signature': signature });
      expect(answer.status).toBe(401);
      expect(answer.json.error).toBe('signature_mismatch');
    }
  });
});

describe('the re-serialization diagnosis is bounded', () => {
  /** A JSON body signed in its pretty-printed form, then sent compact: what a re-serializing relay does. */
  async function reserializedDelivery(size: number) {
    const filler = 'x'.repeat(Math.max(0, size - 64));
    const pretty = JSON.stringify({ action: 'opened', filler }, null, 2);
    const compact = JSON.stringify({ action: 'opened', filler });
    return t.deliver('/webhooks/github', compact, {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-hub-signature-256': await githubSign(SECRET, pretty),
    });
  }

  it('diagnoses a re-serialized body up to the cap', async () => {
    const answer = await reserializedDelivery(RESERIALIZATION_MAX_BYTES - 1024);
    expect(answer.status).toBe(401);
    expect(answer.json.hint).toBe(RESERIALIZED_HINT);
  });

  it('does not parse a forged body over the cap: it is refused as a plain mismatch', async () => {
    const answer = await reserializedDelivery(RESERIALIZATION_MAX_BYTES + 1024);
    expect(answer.status).toBe(401);
    expect(answer.json.error).toBe('signature_mismatch');
    expect(answer.json.hint).not.toBe(RESERIALIZED_HINT);
  });

  it('a 24 MB forged JSON body costs about what a 24 MB forged non-JSON body costs, and /healthz is served meanwhile', async () => {
    // Many small JSON values: the costliest shape to parse and re-stringify.
    const json = Buffer.from(`[${'{"a":[1,2.5,"x"]},'.repeat(1_300_000)}{}]`);
    const opaque = Buffer.alloc(json.length, 0x78);
    const headers = { 'content-type': 'application/json', ...FORGED.github!.headers() };
    const cpuOf = async (body: Buffer) => {
      const start = process.cpuUsage();
      const answers = await Promise.all([
        t.deliver('/webhooks/github', body, headers),
        fetch(`${t.sb.url.receiver}/healthz`).then((response) => response.status),
      ]);
      const used = process.cpuUsage(start);
      expect(answers[0].status).toBe(401);
      expect(answers[1]).toBe(200);
      return used.user + used.system;
    };
    await cpuOf(opaque); // warm-up
    const opaqueCpu = await cpuOf(opaque);
    const jsonCpu = await cpuOf(json);
    // Parsing and stringifying this body three times costs many times the hashing; bounded, the
    // two are the same work (hash, HMAC, store a row) give or take noise.
    expect(jsonCpu).toBeLessThan(opaqueCpu * 2 + 50_000);
  });
});
