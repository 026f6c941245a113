import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import '@shopify/shopify-api/adapters/web-api';
import { ApiVersion, LogSeverity, shopifyApi } from '@shopify/shopify-api';
import { LinearWebhookClient } from '@linear/sdk/webhooks';
import { verify as verifyGithub } from '@octokit/webhooks-methods';
import { Paddle } from '@paddle/paddle-node-sdk';
import { isValidSlackRequest } from '@slack/bolt';
import { verifyKey } from 'discord-interactions';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import Stripe from 'stripe';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../../../src/core/config.js';
import { TEST_FIXTURES } from '../../../src/core/test-events/catalog.js';
import { TEST_MARK_HEADER } from '../../../src/core/test-marks.js';
import { TestEventSender } from '../../../src/core/test-events/send.js';
import type { WebhookKind } from '../../../src/core/config.js';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { expectNothingLeaked } from '../../helpers/providers.js';

/**
 * Every fixture of every webhook kind, sent as a test event and judged by the provider's own
 * library acting as the consumer: a tap between the sender and our receiver hands the exact
 * request to the SDK, then forwards it; the receiver must verify and store it as origin "test".
 */

const PUBLIC_URL = 'https://example.ngrok.app';
const SECRETS = {
  github: "It's a Secret to Everybody",
  stripe: 'whsec_test_0123456789abcdefghijklmnopqrstuv',
  slack: '8f742231b10e8888abcd99yyyzzz85a5',
  shopify: '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',
  'standard-webhooks': 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  linear: 'lin_wh_0123456789abcdef0123456789abcdef',
  paddle: 'pdl_ntfset_01hzzzzzzzzzzzzzzzzzzzzzzz_0123456789abcdefghijklmnopqrstuv',
  twilio: '12345678901234567890123456789012',
  gitlab: 'glpat-secret-token-for-tests',
  token: 'a-shared-token-for-dockerhub',
} as const;

const discordApp = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('hex');

const shopify = shopifyApi({
  apiKey: 'test-app',
  apiSecretKey: SECRETS.shopify,
  scopes: [],
  hostName: 'localhost',
  apiVersion: ApiVersion.July25,
  isEmbeddedApp: false,
  logger: { level: LogSeverity.Error },
});
const stripe = new Stripe('sk_test_unused');
const paddle = new Paddle('pdl_sdbx_apikey_unused_in_tests');

interface Tapped {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** A pass-through between the test-event sender and the receiver that keeps each request. */
async function startTap(target: () => string): Promise<{ url: string; requests: Tapped[]; close(): Promise<void> }> {
  const requests: Tapped[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ path: req.url ?? '', headers: flatten(req.headers), body });
      const headers = { ...flatten(req.headers) };
      delete headers.host;
      delete headers['content-length'];
      fetch(`${target()}${req.url}`, { method: 'POST', headers, body })
        .then(async (answer) => {
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
          res.end(Buffer.from(await answer.arrayBuffer()));
        })
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function flatten(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

/** The provider's own library judges what the consumer would receive. */
async function sdkAccepts(kind: WebhookKind, request: Tapped, marksKey: string): Promise<void> {
  const { headers, body } = request;
  const text = body.toString('utf8');
  switch (kind) {
    case 'github':
      expect(await verifyGithub(SECRETS.github, text, headers['x-hub-signature-256']!)).toBe(true);
      return;
    case 'stripe':
      expect(stripe.webhooks.constructEvent(body, headers['stripe-signature']!, SECRETS.stripe).id).toMatch(/^evt_/);
      return;
    case 'slack':
      expect(isValidSlackRequest({ signingSecret: SECRETS.slack, body: text, headers: { 'x-slack-signature': headers['x-slack-signature']!, 'x-slack-request-timestamp': Number(headers['x-slack-request-timestamp']) } })).toBe(true);
      return;
    case 'shopify': {
      const rawRequest = new Request('http://localhost:3000/webhooks', { method: 'POST', body, headers });
      expect(await shopify.webhooks.validate({ rawBody: text, rawRequest })).toMatchObject({ valid: true, webhookType: 'webhooks' });
      return;
    }
    case 'standard-webhooks':
      expect(new StandardWebhook(SECRETS['standard-webhooks']).verify(text, headers)).toEqual(JSON.parse(text));
      return;
    case 'linear':
      expect(new LinearWebhookClient(SECRETS.linear).verify(body, headers['linear-signature']!)).toBe(true);
      return;
    case 'paddle': {
      const event = await paddle.webhooks.unmarshal(text, SECRETS.paddle, headers['paddle-signature']!);
      expect(event.eventId).toBe(JSON.parse(text).event_id);
      return;
    }
    case 'discord':
      expect(await verifyKey(body, headers['x-signature-ed25519']!, headers['x-signature-timestamp']!, marksKey)).toBe(true);
      return;
    case 'twilio': {
      const params = Object.fromEntries(new URLSearchParams(text));
      expect(twilio.validateRequest(SECRETS.twilio, headers['x-twilio-signature']!, `${PUBLIC_URL}${request.path}`, params)).toBe(true);
      return;
    }
    case 'gitlab':
      expect(headers['x-gitlab-token']).toBe(SECRETS.gitlab);
      return;
    case 'token':
      expect(headers.authorization).toBe(`Bearer ${SECRETS.token}`);
      return;
    case 'open':
      return;
  }
}

const KINDS: WebhookKind[] = ['github', 'stripe', 'slack', 'shopify', 'standard-webhooks', 'linear', 'paddle', 'discord', 'twilio', 'gitlab', 'token', 'open'];

const config: ConfigInput = {
  receiver: { public_url: PUBLIC_URL },
  providers: KINDS.map((kind) =>
    kind === 'discord'
      ? { name: kind, kind, public_key: discordApp }
      : kind === 'open'
        ? { name: kind, kind }
        : { name: kind, kind, secrets: [{ value: SECRETS[kind as keyof typeof SECRETS] }] },
  ),
};

let t: TestSwitchboard;
let tap: Awaited<ReturnType<typeof startTap>>;
let sender: TestEventSender;

beforeAll(async () => {
  t = await startTestSwitchboard(config);
  tap = await startTap(() => t.sb.url.receiver);
  sender = new TestEventSender({ ...t.sb.testEvents.deps, receiverUrl: () => tap.url });
});
afterAll(async () => {
  await tap?.close();
  await t?.close();
});

describe.each(KINDS)('test events for %s', (kind) => {
  it.each(TEST_FIXTURES[kind].map((fixture) => fixture.eventType))('%s: signed as the SDK expects, verified and stored as a test event', async (eventType) => {
    const event = await sender.send({ provider: kind, eventType });
    const request = tap.requests.at(-1)!;
    expect(request.path).toBe(`/webhooks/${kind}`);
    await sdkAccepts(kind, request, t.sb.testEvents.deps.marks.discordPublicKey);

    expect(event).toMatchObject({ provider: kind, origin: 'test', family: 'webhook' });
    const signed = !['gitlab', 'token', 'open'].includes(kind);
    expect(event.verified).toBe(signed);
    const stored = (await t.sb.store.getEvent(event.id))!;
    expect(Buffer.from(stored.payload).equals(request.body)).toBe(true);
    // The mark is ours: it is not stored, and nothing secret is either.
    expect(stored.headers[TEST_MARK_HEADER]).toBeUndefined();
    expect(JSON.stringify(stored.headers)).not.toContain(SECRETS[kind as keyof typeof SECRETS] ?? '\u0000');

    // A second send is a new event (fresh ids), not a duplicate.
    const again = await sender.send({ provider: kind, eventType });
    expect(again.id).not.toBe(event.id);
    if (event.external_id !== null) expect(again.external_id).not.toBe(event.external_id);
  });
});

describe('what the receiver stores', () => {
  it('names the stored event types after the catalog entries', async () => {
    const expected: Record<string, string> = {
      'github/pull_request.opened': 'pull_request.opened',
      'slack/slash_command': 'command /deploy',
      'discord/APPLICATION_COMMAND': 'APPLICATION_COMMAND hello',
      'linear/Issue.create': 'Issue.create',
      'gitlab/merge_request': 'merge_request',
      'twilio/message.received': 'message.received',
      'twilio/message.delivered': 'message.delivered',
      'twilio/call.ringing': 'call.ringing',
    };
    for (const [key, type] of Object.entries(expected)) {
      const [provider, eventType] = key.split('/') as [string, string];
      expect((await sender.send({ provider, eventType })).event_type, key).toBe(type);
    }
  });

  it('keeps every secret out of stored rows and logs', async () => {
    for (const kind of ['github', 'stripe', 'paddle'] as const) await expectNothingLeaked(t, kind, [SECRETS[kind]]);
  });
});
