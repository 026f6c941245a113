import { randomBytes } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { sign as githubSign, verify as githubVerify } from '@octokit/webhooks-methods';
import { isValidSlackRequest } from '@slack/bolt';
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../../../src/core/config.js';
import { SwitchboardError } from '../../../src/core/errors.js';
import { ReplayEngine } from '../../../src/core/replay/replay.js';
import type { ReplayRecord } from '../../../src/core/store/types.js';
import { startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../../helpers/core.js';
import { closedPort, startConsumer, type Consumer } from './consumer.js';

const GITHUB_SECRET = "It's a Secret to Everybody";
const STRIPE_SECRET = 'whsec_test_replay_0123456789abcdefghijklmnop';
const SLACK_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const DOCKER_TOKEN = 'dockerhub-shared-token-7f3a9c';
const stripe = new Stripe('sk_test_unused');

const BASE_CONFIG = {
  providers: [
    { name: 'github', kind: 'github', secrets: [{ env: 'GH_SECRET' }] },
    { name: 'stripe', kind: 'stripe', secrets: [{ env: 'STRIPE_SECRET' }] },
    { name: 'slack', kind: 'slack', secrets: [{ env: 'SLACK_SECRET' }] },
    { name: 'dockerhub', kind: 'token', secrets: [{ env: 'DOCKER_TOKEN' }] },
    { name: 'homelab', kind: 'open' },
  ],
  replay: { timeout_ms: 1000 },
} satisfies ConfigInput;

let t: TestSwitchboard;
let consumer: Consumer;

beforeAll(async () => {
  [t, consumer] = await Promise.all([
    startTestSwitchboard(BASE_CONFIG, { env: { GH_SECRET: GITHUB_SECRET, STRIPE_SECRET, SLACK_SECRET, DOCKER_TOKEN } }),
    startConsumer(),
  ]);
});
afterAll(async () => {
  await consumer?.close();
  await t?.close();
});
afterEach(async () => {
  consumer.reset();
  await t.sb.updateConfig(BASE_CONFIG);
});

const replayConfig = (replay: NonNullable<ConfigInput['replay']>) => t.sb.updateConfig({ ...BASE_CONFIG, replay: { ...BASE_CONFIG.replay, ...replay } });

async function githubEvent(body: string, delivery = `d-${randomBytes(6).toString('hex')}`, extra: Record<string, string> = {}): Promise<number> {
  const answer = await t.deliver('/webhooks/github', body, {
    'content-type': 'application/json',
    'x-github-event': 'push',
    'x-github-delivery': delivery,
    'x-github-hook-id': '4242',
    'x-hub-signature-256': await githubSign(GITHUB_SECRET, body),
    ...extra,
  });
  expect(answer.status).toBe(200);
  return answer.json.id as number;
}

async function expectInvalid(promise: Promise<unknown>, message: RegExp): Promise<SwitchboardError> {
  const error = await promise.then(
    () => {
      throw new Error('expected the replay to be refused');
    },
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(SwitchboardError);
  expect((error as SwitchboardError).code).toBe('invalid_argument');
  expect((error as SwitchboardError).message).toMatch(message);
  return error as SwitchboardError;
}

describe('what the consumer receives', () => {
  it('re-POSTs the stored bytes with only the replay-safe headers, re-signed for GitHub', async () => {
    const body = JSON.stringify({ ref: 'refs/heads/main', commits: [{ id: 'abc' }] });
    const id = await githubEvent(body, 'delivery-safe-1', {
      authorization: 'Bearer someone-elses-token-123',
      cookie: 'session=abcdef',
      'x-forwarded-for': '203.0.113.9',
      'x-custom-thing': 'not routing',
    });
    const announced: ReplayRecord[] = [];
    const listener = (record: ReplayRecord) => announced.push(record);
    t.sb.bus.on('replay', listener);
    const record = await t.sb.replays.replay({ eventId: id, targetUrl: consumer.url('/hooks/github'), requestedBy: 'ui' });
    t.sb.bus.off('replay', listener);

    expect(consumer.requests).toHaveLength(1);
    const received = consumer.requests[0]!;
    expect(received.method).toBe('POST');
    expect(received.url).toBe('/hooks/github');
    expect(received.body.toString()).toBe(body);
    expect(Object.keys(received.headers).sort()).toEqual(
      [
        'connection',
        'content-length',
        'content-type',
        'host',
        'user-agent',
        'x-github-delivery',
        'x-github-event',
        'x-github-hook-id',
        'x-hub-signature',
        'x-hub-signature-256',
        'x-switchboard-replay',
      ].sort(),
    );
    expect(received.headers).toMatchObject({
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-github-delivery': 'delivery-safe-1',
      'x-github-hook-id': '4242',
      'user-agent': `switchboard-replay/${t.sb.version}`,
      'x-switchboard-replay': String(id),
      host: `127.0.0.1:${consumer.port}`,
    });
    expect(await githubVerify(GITHUB_SECRET, received.body.toString(), received.headers['x-hub-signature-256'] as string)).toBe(true);

    expect(record).toMatchObject({
      event_id: id,
      target_url: consumer.url('/hooks/github'),
      resigned: true,
      delivered: true,
      response_status: 200,
      error: null,
      requested_by: 'ui',
    });
    expect(Buffer.from(record.response_body!).toString()).toBe('ok');
    expect(record.response_headers?.['content-type']).toBe('text/plain');
    expect(record.response_ms).toEqual(expect.any(Number));
    expect(announced).toEqual([record]);
  });

  it('sends binary payloads byte for byte', async () => {
    const body = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(70_000)]);
    const answer = await t.deliver('/webhooks/homelab', body, { 'content-type': 'application/octet-stream', 'x-event-type': 'blob' });
    expect(answer.status).toBe(200);
    const record = await t.sb.replays.replay({ eventId: answer.json.id, targetUrl: consumer.url(), requestedBy: 'mcp' });
    expect(record).toMatchObject({ delivered: true, resigned: false, requested_by: 'mcp' });
    const received = consumer.requests[0]!;
    expect(received.body.equals(body)).toBe(true);
    expect(received.headers['content-type']).toBe('application/octet-stream');
    expect(received.headers['x-event-type']).toBe('blob');
  });

  it('never forwards a token provider\'s token', async () => {
    const answer = await t.deliver('/webhooks/dockerhub', '{"push_data":{}}', { authorization: `Bearer ${DOCKER_TOKEN}`, 'content-type': 'application/json' });
    expect(answer.status).toBe(200);
    await t.sb.replays.replay({ eventId: answer.json.id, targetUrl: consumer.url(), requestedBy: 'ui' });
    const received = consumer.requests[0]!;
    expect(received.headers.authorization).toBeUndefined();
    expect(JSON.stringify(received.headers)).not.toContain(DOCKER_TOKEN);
  });

  it('re-signs an hour-old Stripe event with a fresh timestamp that stripe.webhooks.constructEvent accepts', async () => {
    const body = JSON.stringify({ id: 'evt_old_1', object: 'event', type: 'checkout.session.completed', data: { object: { id: 'cs_1' } } });
    // Stored an hour ago: replaying its original signature would fail Stripe's 300 s tolerance.
    const { event } = await t.sb.store.insertEvent({
      provider: 'stripe',
      family: 'webhook',
      event_type: 'checkout.session.completed',
      external_id: 'evt_old_1',
      trust_mode: 'signed',
      verified: true,
      verify_detail: 'stripe: v1 signature verified',
      content_type: 'application/json; charset=utf-8',
      headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': '«redacted»' },
      payload: Buffer.from(body),
      source_ip: '127.0.0.1',
    });
    await t.sb.replays.replay({ eventId: event.id, targetUrl: consumer.url('/stripe'), requestedBy: 'ui' });
    const received = consumer.requests[0]!;
    const header = received.headers['stripe-signature'] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const constructed = stripe.webhooks.constructEvent(received.body, header, STRIPE_SECRET);
    expect(constructed.id).toBe('evt_old_1');
    expect(received.body.toString()).toBe(body);
    expect(() => stripe.webhooks.constructEvent(received.body, header, 'whsec_some_other_secret')).toThrow();
  });

  it('re-signs Slack with a new timestamp that @slack/bolt accepts', async () => {
    const body = JSON.stringify({ type: 'event_callback', event_id: 'Ev_replay_1', event: { type: 'app_mention', text: 'hi' } });
    const timestamp = Math.floor(Date.now() / 1000);
    const { createHmac } = await import('node:crypto');
    const signature = `v0=${createHmac('sha256', SLACK_SECRET).update(`v0:${timestamp}:${body}`).digest('hex')}`;
    expect(isValidSlackRequest({ signingSecret: SLACK_SECRET, body, headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': timestamp } })).toBe(true);
    const answer = await t.deliver('/webhooks/slack', body, {
      'content-type': 'application/json',
      'x-slack-signature': signature,
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-retry-num': '1',
    });
    expect(answer.status).toBe(200);
    await t.sb.replays.replay({ eventId: answer.json.id, targetUrl: consumer.url('/slack/events'), requestedBy: 'ui' });
    const received = consumer.requests[0]!;
    expect(received.headers['x-slack-retry-num']).toBe('1');
    expect(
      isValidSlackRequest({
        signingSecret: SLACK_SECRET,
        body: received.body.toString(),
        headers: {
          'x-slack-signature': received.headers['x-slack-signature'] as string,
          'x-slack-request-timestamp': Number(received.headers['x-slack-request-timestamp']),
        },
      }),
    ).toBe(true);
  });

  it('with re-signing off sends no signature at all (never the stale one)', async () => {
    const body = '{"zen":"no resign"}';
    const id = await githubEvent(body);
    const record = await t.sb.replays.replay({ eventId: id, targetUrl: consumer.url(), resign: false, requestedBy: 'ui' });
    expect(record.resigned).toBe(false);
    const received = consumer.requests[0]!;
    expect(received.body.toString()).toBe(body);
    expect(received.headers['x-hub-signature-256']).toBeUndefined();
    expect(received.headers['x-hub-signature']).toBeUndefined();
    expect(JSON.stringify(received.headers)).not.toContain('redacted');
  });

  it('replay.resign: false in config is the default a request can override', async () => {
    const id = await githubEvent('{"a":1}');
    await replayConfig({ resign: false });
    expect((await t.sb.replays.replay({ eventId: id, targetUrl: consumer.url(), requestedBy: 'ui' })).resigned).toBe(false);
    expect((await t.sb.replays.replay({ eventId: id, targetUrl: consumer.url(), resign: true, requestedBy: 'ui' })).resigned).toBe(true);
    expect(consumer.requests[0]!.headers['x-hub-signature-256']).toBeUndefined();
    expect(await githubVerify(GITHUB_SECRET, '{"a":1}', consumer.requests[1]!.headers['x-hub-signature-256'] as string)).toBe(true);
  });

  it('edit then replay: sends the edited bytes and header overrides, re-signed over the edit', async () => {
    const id = await githubEvent('{"action":"opened"}');
    const edited = '{"action":"closed","edited":true}';
    await t.sb.replays.replay({
      eventId: id,
      targetUrl: consumer.url(),
      payload: new TextEncoder().encode(edited),
      headers: {
        'X-GitHub-Event': 'issues',
        'x-debug': 'yes',
        'x-github-hook-id': '',
        'x-switchboard-replay': '999999',
      },
      requestedBy: 'ui',
    });
    const received = consumer.requests[0]!;
    expect(received.body.toString()).toBe(edited);
    expect(received.headers['x-github-event']).toBe('issues');
    expect(received.headers['x-debug']).toBe('yes');
    expect(received.headers['x-github-hook-id']).toBeUndefined();
    expect(received.headers['x-switchboard-replay']).toBe(String(id));
    expect(await githubVerify(GITHUB_SECRET, edited, received.headers['x-hub-signature-256'] as string)).toBe(true);
    // The stored event is untouched.
    expect(Buffer.from((await t.sb.store.getEvent(id))!.payload).toString()).toBe('{"action":"opened"}');
    // History says what was changed and what went out (signature «redacted»).
    const [row] = await t.sb.replays.history(id);
    expect(row).toMatchObject({ payload_edited: true, headers_overridden: ['x-github-event', 'x-debug', 'x-github-hook-id'], resigned: true, warning: null });
    expect(row!.request_headers).toMatchObject({ 'x-github-event': 'issues', 'x-debug': 'yes', 'x-hub-signature-256': '«redacted»', 'x-switchboard-replay': String(id) });
    expect(row!.request_headers!['x-github-hook-id']).toBeUndefined();
  });

  it('does not mark the stored bytes sent back unchanged as an edit', async () => {
    const id = await githubEvent('{"same":true}');
    const record = await t.sb.replays.replay({ eventId: id, targetUrl: consumer.url(), payload: Buffer.from('{"same":true}'), requestedBy: 'ui' });
    expect(record).toMatchObject({ payload_edited: false, headers_overridden: [] });
  });

  it('sets dot paths in a JSON body (overrides), re-signed over the new bytes; form fields by name', async () => {
    const id = await githubEvent(JSON.stringify({ action: 'opened', pull_request: { number: 7, labels: ['a'] } }));
    const record = await t.sb.replays.replay({
      eventId: id,
      targetUrl: consumer.url(),
      overrides: { action: 'closed', 'pull_request.number': 8, 'pull_request.labels.1': 'b', 'sender.login': 'octocat' },
      requestedBy: 'cli',
    });
    const received = consumer.requests.at(-1)!;
    expect(JSON.parse(received.body.toString())).toEqual({ action: 'closed', pull_request: { number: 8, labels: ['a', 'b'] }, sender: { login: 'octocat' } });
    expect(await githubVerify(GITHUB_SECRET, received.body.toString(), received.headers['x-hub-signature-256'] as string)).toBe(true);
    expect(record).toMatchObject({ payload_edited: true, resigned: true });

    const slackBody = 'command=%2Fdeploy&text=staging&user_id=U1';
    const timestamp = String(Math.floor(Date.now() / 1000));
    const { createHmac } = await import('node:crypto');
    const answer = await t.deliver('/webhooks/slack', slackBody, {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': timestamp,
      'x-slack-signature': `v0=${createHmac('sha256', SLACK_SECRET).update(`v0:${timestamp}:${slackBody}`).digest('hex')}`,
    });
    expect(answer.status).toBe(200);
    await t.sb.replays.replay({ eventId: answer.json.id, targetUrl: consumer.url(), overrides: { text: 'production' }, requestedBy: 'cli' });
    const replayed = consumer.requests.at(-1)!;
    expect(Object.fromEntries(new URLSearchParams(replayed.body.toString()))).toEqual({ command: '/deploy', text: 'production', user_id: 'U1' });
    const headers = { 'x-slack-signature': replayed.headers['x-slack-signature'] as string, 'x-slack-request-timestamp': Number(replayed.headers['x-slack-request-timestamp']) };
    expect(isValidSlackRequest({ signingSecret: SLACK_SECRET, body: replayed.body.toString(), headers })).toBe(true);
  });

  it('refuses overrides on a body that is not JSON, or a path into the prototype, without a request', async () => {
    const answer = await t.deliver('/webhooks/homelab', 'plain text, not JSON', { 'content-type': 'text/plain' });
    await expectInvalid(t.sb.replays.replay({ eventId: answer.json.id, targetUrl: consumer.url(), overrides: { a: 1 }, requestedBy: 'cli' }), /not JSON.*--set/);
    const json = await t.deliver('/webhooks/homelab', '{"a":1}', { 'content-type': 'application/json' });
    await expectInvalid(t.sb.replays.replay({ eventId: json.json.id, targetUrl: consumer.url(), overrides: { '__proto__.polluted': 1 }, requestedBy: 'cli' }), /__proto__/);
    const scalar = await t.deliver('/webhooks/homelab', '42', { 'content-type': 'application/json' });
    await expectInvalid(t.sb.replays.replay({ eventId: scalar.json.id, targetUrl: consumer.url(), overrides: { a: 1 }, requestedBy: 'cli' }), /not an object/);
    expect(consumer.connections).toBe(0);
  });

  it('refuses header overrides that would break the request framing', async () => {
    const id = await githubEvent('{"b":2}');
    const overrides: Record<string, string>[] = [{ host: 'evil.example' }, { 'content-length': '1' }, { 'bad name': 'x' }, { 'x-ok': 'a\r\nx-injected: 1' }];
    for (const headers of overrides) {
      await expectInvalid(t.sb.replays.replay({ eventId: id, targetUrl: consumer.url(), headers, requestedBy: 'ui' }), /header/);
    }
    expect(consumer.connections).toBe(0);
  });
});

describe('re-signing is never silent (issue 10, items 13 and 14)', () => {
  const staleSignature = 'sha256=0000000000000000000000000000000000000000000000000000000000000000';

  it('refuses a signature header override while re-signing, naming the way out; sends it as given with resign: false', async () => {
    const id = await githubEvent('{"sig":"own"}');
    for (const name of ['x-hub-signature-256', 'X-Hub-Signature']) {
      const error = await expectInvalid(
        t.sb.replays.replay({ eventId: id, targetUrl: consumer.url(), headers: { [name]: staleSignature }, requestedBy: 'ui' }),
        /re-signing computes.*resign: false/,
      );
      expect(error.message).toContain(name.toLowerCase());
    }
    // Removing it while re-signing would be undone just as silently.
    await expectInvalid(t.sb.replays.replay({ eventId: id, targetUrl: consumer.url(), headers: { 'x-hub-signature-256': '' }, requestedBy: 'mcp' }), /resign: false/);
    expect(consumer.connections).toBe(0);

    const record = await t.sb.replays.replay({
      eventId: id,
      targetUrl: consumer.url(),
      resign: false,
      headers: { 'x-hub-signature-256': staleSignature },
      requestedBy: 'mcp',
    });
    expect(record).toMatchObject({ resigned: false, warning: null, headers_overridden: ['x-hub-signature-256'], payload_edited: false });
    expect(consumer.requests[0]!.headers['x-hub-signature-256']).toBe(staleSignature);
    expect(record.request_headers!['x-hub-signature-256']).toBe('«redacted»');
  });

  it('refuses it when replay.resign is on by config, not only by request', async () => {
    const id = await githubEvent('{"sig":"config"}');
    await replayConfig({ resign: true });
    await expectInvalid(t.sb.replays.replay({ eventId: id, targetUrl: consumer.url(), headers: { 'x-hub-signature': 'sha1=00' }, requestedBy: 'ui' }), /resign: false/);
    await replayConfig({ resign: false });
    expect(await t.sb.replays.replay({ eventId: id, targetUrl: consumer.url(), headers: { 'x-hub-signature': 'sha1=00' }, requestedBy: 'ui' })).toMatchObject({
      resigned: false,
      warning: null,
    });
  });

  it('answers resigned: false with a warning, stored on the row, when the provider was removed', async () => {
    const id = await githubEvent('{"gone":true}');
    await t.sb.updateConfig({ ...BASE_CONFIG, providers: BASE_CONFIG.providers.filter((provider) => provider.name !== 'github') });
    const record = await t.sb.replays.replay({ eventId: id, targetUrl: consumer.url(), requestedBy: 'ui' });
    expect(record).toMatchObject({ delivered: true, resigned: false, warning: expect.stringMatching(/not re-signed: provider "github" is no longer configured/) });
    expect(consumer.requests[0]!.headers['x-hub-signature-256']).toBeUndefined();
    expect((await t.sb.replays.history(id))[0]!.warning).toBe(record.warning);
  });

  it('warns when the provider has no usable secret, and when its kind cannot be re-signed', async () => {
    const id = await githubEvent('{"nosecret":true}');
    await t.sb.updateConfig({
      ...BASE_CONFIG,
      providers: BASE_CONFIG.providers.map((provider) => (provider.name === 'github' ? { ...provider, secrets: [{ env: 'NOT_SET_ANYWHERE' }] } : provider)),
    });
    expect(await t.sb.replays.replay({ eventId: id, targetUrl: consumer.url(), requestedBy: 'ui' })).toMatchObject({
      resigned: false,
      warning: expect.stringMatching(/provider "github" has no usable secret/),
    });

    const token = await t.deliver('/webhooks/dockerhub', '{"push_data":{}}', { authorization: `Bearer ${DOCKER_TOKEN}`, 'content-type': 'application/json' });
    expect(await t.sb.replays.replay({ eventId: token.json.id, targetUrl: consumer.url(), requestedBy: 'forward' })).toMatchObject({
      resigned: false,
      warning: expect.stringMatching(/token deliveries cannot be re-signed/),
    });
  });

  it('has nothing to warn about for an open event, or when re-signing was not asked for', async () => {
    const open = await t.deliver('/webhooks/homelab', '{"open":true}', { 'content-type': 'application/json' });
    expect(await t.sb.replays.replay({ eventId: open.json.id, targetUrl: consumer.url(), requestedBy: 'ui' })).toMatchObject({ resigned: false, warning: null });
    const id = await githubEvent('{"plain":true}');
    await t.sb.updateConfig({ ...BASE_CONFIG, providers: BASE_CONFIG.providers.filter((provider) => provider.name !== 'github') });
    expect(await t.sb.replays.replay({ eventId: id, targetUrl: consumer.url(), resign: false, requestedBy: 'ui' })).toMatchObject({ resigned: false, warning: null });
  });

  it('says the same through the UI API over HTTP: 400 for the override, the warning on the result', async () => {
    const call = async (input: unknown) => {
      const response = await fetch(`${t.sb.url.control}/api/replayEvent`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(input),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    const id = await githubEvent('{"via":"api"}');
    const refused = await call({ id, target_url: consumer.url(), headers: { 'x-hub-signature-256': staleSignature } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'invalid_argument', message: expect.stringMatching(/resign: false/) });
    expect(consumer.connections).toBe(0);
    const own = await call({ id, target_url: consumer.url(), resign: false, headers: { 'x-hub-signature-256': staleSignature } });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ resigned: false, warning: null, headers_overridden: ['x-hub-signature-256'] });

    await t.sb.updateConfig({ ...BASE_CONFIG, providers: BASE_CONFIG.providers.filter((provider) => provider.name !== 'github') });
    const unsigned = await call({ id, target_url: consumer.url(), resign: true, payload: '{"via":"api","edited":1}' });
    expect(unsigned.status).toBe(200);
    expect(unsigned.body).toMatchObject({ resigned: false, payload_edited: true, warning: expect.stringMatching(/not re-signed/) });
  });
});

describe('targets', () => {
  it('uses replay.default_target when no target is given, and refuses when there is neither', async () => {
    const id = await githubEvent('{"c":3}');
    await expectInvalid(t.sb.replays.replay({ eventId: id, requestedBy: 'mcp' }), /no replay target/);
    expect(consumer.connections).toBe(0);
    await replayConfig({ default_target: consumer.url('/default') });
    const record = await t.sb.replays.replay({ eventId: id, requestedBy: 'mcp' });
    expect(record.target_url).toBe(consumer.url('/default'));
    expect(consumer.requests.map((request) => request.url)).toEqual(['/default']);
  });

  it("without a target, goes to the provider's forward target first, then the event's last target, then replay.default_target", async () => {
    await t.sb.updateConfig({
      ...BASE_CONFIG,
      providers: BASE_CONFIG.providers.map((provider) => (provider.name === 'stripe' ? { ...provider, forward_to: [consumer.url('/stripe-handler')] } : provider)),
      replay: { ...BASE_CONFIG.replay, default_target: consumer.url('/github-handler') },
    });
    const body = JSON.stringify({ id: 'evt_target_1', object: 'event', type: 'invoice.paid', data: { object: {} } });
    const forwarded = consumer.nextRequest();
    const answer = await t.deliver('/webhooks/stripe', body, {
      'content-type': 'application/json',
      'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: body, secret: STRIPE_SECRET }),
    });
    await forwarded;
    // Stripe has its own handler: the global default (the GitHub handler here) is not used, and Stripe's SDK accepts it.
    const stripeReplay = await t.sb.replays.replay({ eventId: answer.json.id, requestedBy: 'cli' });
    expect(stripeReplay.target_url).toBe(consumer.url('/stripe-handler'));
    const sent = consumer.requests.at(-1)!;
    expect(stripe.webhooks.constructEvent(sent.body, sent.headers['stripe-signature'] as string, STRIPE_SECRET).id).toBe('evt_target_1');

    // GitHub has no forward rule: the default, until the event was replayed somewhere else.
    const id = await githubEvent('{"target":"order"}');
    expect((await t.sb.replays.replay({ eventId: id, requestedBy: 'ui' })).target_url).toBe(consumer.url('/github-handler'));
    await t.sb.replays.replay({ eventId: id, targetUrl: consumer.url('/elsewhere'), requestedBy: 'ui' });
    expect((await t.sb.replays.replay({ eventId: id, requestedBy: 'mcp' })).target_url).toBe(consumer.url('/elsewhere'));
    // prepare (Copy as cURL, re-signed) chooses the same way and says why.
    expect(await t.sb.replays.prepare({ eventId: id, requestedBy: 'ui' })).toMatchObject({ targetUrl: consumer.url('/elsewhere'), targetSource: 'last' });
    expect(await t.sb.replays.prepare({ eventId: answer.json.id, requestedBy: 'ui' })).toMatchObject({ targetUrl: consumer.url('/stripe-handler'), targetSource: 'forward' });
  });

  it('names every way to give a target when there is none', async () => {
    const id = await githubEvent('{"no":"target"}');
    const error = await expectInvalid(t.sb.replays.replay({ eventId: id, requestedBy: 'cli' }), /no replay target for event \d+/);
    expect(error.message).toMatch(/--to/);
    expect(error.message).toMatch(/forward_to.*"github"/);
    expect(error.message).toMatch(/replay\.default_target/);
    expect(consumer.connections).toBe(0);
  });

  it('refuses bad URLs and other schemes, and unknown events, without a request', async () => {
    const id = await githubEvent('{"d":4}');
    await expectInvalid(t.sb.replays.replay({ eventId: id, targetUrl: 'localhost:3000', requestedBy: 'ui' }), /http or https/);
    await expectInvalid(t.sb.replays.replay({ eventId: id, targetUrl: 'not a url', requestedBy: 'ui' }), /not a URL/);
    await expectInvalid(t.sb.replays.replay({ eventId: id, targetUrl: `ftp://127.0.0.1:${consumer.port}/`, requestedBy: 'ui' }), /http or https/);
    await expectInvalid(t.sb.replays.replay({ eventId: id, targetUrl: `http://user:pw@127.0.0.1:${consumer.port}/`, requestedBy: 'ui' }), /credentials/);
    await expect(t.sb.replays.replay({ eventId: 987_654, targetUrl: consumer.url(), requestedBy: 'ui' })).rejects.toMatchObject({ code: 'not_found' });
    expect(consumer.connections).toBe(0);
    expect(await t.sb.replays.history(id)).toEqual([]);
  });
});

describe('SSRF guard', () => {
  it('refuses every spelling of an address outside replay.allow_hosts before connecting', async () => {
    const id = await githubEvent('{"ssrf":1}');
    const port = consumer.port;
    // The consumer listens on every local address: each of these would reach it if let through.
    await replayConfig({ allow_hosts: ['localhost'] });
    for (const host of ['127.0.0.1', '2130706433', '0x7f.1', '127.1', '0177.0.0.1', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[::1]', '127.0.0.2']) {
      await expectInvalid(t.sb.replays.replay({ eventId: id, targetUrl: `http://${host}:${port}/`, requestedBy: 'mcp' }), /not in replay.allow_hosts/);
    }
    for (const host of ['example.com', 'localhost.example.com', '10.0.0.1', '[fd00::2]']) {
      await expectInvalid(t.sb.replays.replay({ eventId: id, targetUrl: `http://${host}:${port}/`, requestedBy: 'mcp' }), /not in replay.allow_hosts/);
    }
    expect(consumer.connections).toBe(0);
    expect(await t.sb.replays.history(id)).toEqual([]);
  });

  it('compares addresses after normalization, so an allowed address is allowed in any spelling', async () => {
    const id = await githubEvent('{"ssrf":2}');
    await replayConfig({ allow_hosts: ['127.0.0.1'] });
    for (const host of ['2130706433', '0x7f.1', '127.1', '[::ffff:127.0.0.1]']) {
      const record = await t.sb.replays.replay({ eventId: id, targetUrl: `http://${host}:${consumer.port}/`, requestedBy: 'ui' });
      expect(record.delivered).toBe(true);
    }
    expect(consumer.requests).toHaveLength(4);
  });

  it('always refuses 0.0.0.0, ::, link-local and metadata addresses, even when allow-listed', async () => {
    const id = await githubEvent('{"ssrf":3}');
    const port = consumer.port;
    const targets = [
      `http://0.0.0.0:${port}/`,
      `http://0:${port}/`,
      `http://[::]:${port}/`,
      `http://[::ffff:0.0.0.0]:${port}/`,
      'http://169.254.169.254/latest/meta-data/',
      'http://2852039166/latest/meta-data/',
      'http://0xa9.0xfe.0xa9.0xfe/',
      'http://[::ffff:169.254.169.254]/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://[fe80::1]/',
      'http://168.63.129.16/',
      'http://metadata.google.internal/computeMetadata/v1/',
    ];
    await replayConfig({
      allow_hosts: ['localhost', '0.0.0.0', '::', '169.254.169.254', 'fd00:ec2::254', 'fe80::1', '168.63.129.16', 'metadata.google.internal'],
    });
    for (const target of targets) {
      const error = await expectInvalid(t.sb.replays.replay({ eventId: id, targetUrl: target, requestedBy: 'mcp' }), /refused/);
      expect(error.message).not.toMatch(/allow_hosts/);
    }
    // 0.0.0.0 and :: would have reached the consumer (Linux connects them to localhost).
    expect(consumer.connections).toBe(0);
  });

  it('refuses the providers\' own hosts even when allow-listed', async () => {
    const id = await githubEvent('{"ssrf":4}');
    const hosts = ['github.com', 'api.github.com', 'api.stripe.com', 'hooks.slack.com', 'slack.com', 'example.myshopify.com', 'discord.com'];
    await replayConfig({ allow_hosts: ['localhost', ...hosts] });
    for (const host of hosts) {
      await expectInvalid(t.sb.replays.replay({ eventId: id, targetUrl: `https://${host}/webhooks`, requestedBy: 'ui' }), /webhook provider/);
    }
  });

  it('does not follow redirects: the 3xx is the result', async () => {
    const id = await githubEvent('{"redirect":1}');
    consumer.respond = (request, res) => {
      if (request.url === '/moved') {
        res.writeHead(307, { location: `http://127.0.0.1:${consumer.port}/elsewhere` });
        res.end();
      } else {
        res.end('followed');
      }
    };
    const record = await t.sb.replays.replay({ eventId: id, targetUrl: consumer.url('/moved'), requestedBy: 'ui' });
    expect(record).toMatchObject({ delivered: true, response_status: 307 });
    expect(record.response_headers?.location).toBe(`http://127.0.0.1:${consumer.port}/elsewhere`);
    expect(consumer.requests.map((request) => request.url)).toEqual(['/moved']);
  });
});

/** A resolver we control: each lookup of a name takes the next answer from its script. */
function scriptedResolver(script: Record<string, string[][]>): LookupFunction & { calls: string[] } {
  const calls: string[] = [];
  const lookup = ((hostname, options, callback) => {
    calls.push(hostname);
    const answers = script[hostname]?.shift();
    if (!answers) {
      const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return callback(error, '', 4);
    }
    const entries: LookupAddress[] = answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    if (options.all) callback(null, entries);
    else callback(null, entries[0]!.address, entries[0]!.family);
  }) as LookupFunction & { calls: string[] };
  lookup.calls = calls;
  return lookup;
}

describe('DNS rebinding', () => {
  let engine: ReplayEngine | undefined;
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
  });

  function engineWith(lookup: LookupFunction): ReplayEngine {
    const { sb } = t;
    engine = new ReplayEngine({ store: sb.store, bus: sb.bus, providers: sb.providers, config: () => sb.config, version: sb.version, now: sb.now, logger: sb.logger, lookup });
    return engine;
  }

  it('checks the address each connection really uses: a name that turns into 0.0.0.0 is refused', async () => {
    const id = await githubEvent('{"rebind":1}');
    await replayConfig({ allow_hosts: ['localhost', 'rebind.test'] });
    // First answer is this machine; the second is 0.0.0.0, which Linux would also connect to the consumer.
    const lookup = scriptedResolver({ 'rebind.test': [['127.0.0.1'], ['0.0.0.0'], ['::']] });
    const replays = engineWith(lookup);
    const target = `http://rebind.test:${consumer.port}/hook`;
    expect((await replays.replay({ eventId: id, targetUrl: target, requestedBy: 'mcp' })).delivered).toBe(true);
    expect(consumer.connections).toBe(1);
    await expectInvalid(replays.replay({ eventId: id, targetUrl: target, requestedBy: 'mcp' }), /rebind\.test resolved to 0\.0\.0\.0/);
    await expectInvalid(replays.replay({ eventId: id, targetUrl: target, requestedBy: 'mcp' }), /rebind\.test resolved to ::/);
    expect(lookup.calls).toEqual(['rebind.test', 'rebind.test', 'rebind.test']);
    expect(consumer.connections).toBe(1);
    expect(consumer.requests).toHaveLength(1);
    expect((await t.sb.replays.history(id)).length).toBe(1);
  });

  it('refuses a name answering a metadata address, or a mix of good and bad answers', async () => {
    const id = await githubEvent('{"rebind":2}');
    await replayConfig({ allow_hosts: ['evil.test', 'mixed.test'] });
    const lookup = scriptedResolver({
      'evil.test': [['169.254.169.254']],
      'mixed.test': [['127.0.0.1', '169.254.169.254']],
    });
    const replays = engineWith(lookup);
    await expectInvalid(replays.replay({ eventId: id, targetUrl: `http://evil.test:${consumer.port}/`, requestedBy: 'mcp' }), /link-local/);
    await expectInvalid(replays.replay({ eventId: id, targetUrl: `http://mixed.test:${consumer.port}/`, requestedBy: 'mcp' }), /169\.254\.169\.254/);
    expect(consumer.connections).toBe(0);
  });

  it('requires localhost names to resolve to loopback', async () => {
    const id = await githubEvent('{"rebind":3}');
    await replayConfig({ allow_hosts: ['app.localhost'] });
    const replays = engineWith(scriptedResolver({ 'app.localhost': [['10.1.2.3']] }));
    await expectInvalid(replays.replay({ eventId: id, targetUrl: 'http://app.localhost:3000/', requestedBy: 'ui' }), /not a loopback address/);
  });
});

describe('results', () => {
  it('reports a downstream 500 as delivered, with its status and body', async () => {
    const id = await githubEvent('{"e":5}');
    consumer.respond = (_request, res) => {
      res.writeHead(500, { 'content-type': 'application/json', 'set-cookie': 'sid=secret-session' });
      res.end('{"error":"handler crashed"}');
    };
    const record = await t.sb.replays.replay({ eventId: id, targetUrl: consumer.url(), requestedBy: 'ui' });
    expect(record).toMatchObject({ delivered: true, response_status: 500, error: null });
    expect(Buffer.from(record.response_body!).toString()).toBe('{"error":"handler crashed"}');
    expect(record.response_headers?.['set-cookie']).toBe('«redacted»');
  });

  it('keeps the first 64 KiB of a large response body', async () => {
    const id = await githubEvent('{"f":6}');
    consumer.respond = (_request, res) => res.end(Buffer.alloc(300_000, 0x61));
    const record = await t.sb.replays.replay({ eventId: id, targetUrl: consumer.url(), requestedBy: 'ui' });
    expect(record.delivered).toBe(true);
    expect(record.response_body!.byteLength).toBe(64 * 1024);
  });

  it('records a refused connection as not delivered', async () => {
    const id = await githubEvent('{"g":7}');
    const port = await closedPort();
    const record = await t.sb.replays.replay({ eventId: id, targetUrl: `http://127.0.0.1:${port}/`, requestedBy: 'mcp' });
    expect(record).toMatchObject({ delivered: false, response_status: null, requested_by: 'mcp' });
    expect(record.error).toMatch(/connection refused .*is the local consumer running/);
  });

  it('records a timeout (replay.timeout_ms) as not delivered', async () => {
    const id = await githubEvent('{"h":8}');
    consumer.respond = () => {}; // never answers
    const started = Date.now();
    const record = await t.sb.replays.replay({ eventId: id, targetUrl: consumer.url(), requestedBy: 'ui' });
    const elapsed = Date.now() - started;
    expect(record).toMatchObject({ delivered: false, response_status: null });
    expect(record.error).toMatch(/within 1000 ms/);
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(5_000);
  });

  it('keeps every attempt as a replays row, history newest first', async () => {
    const id = await githubEvent('{"i":9}');
    const first = await t.sb.replays.replay({ eventId: id, targetUrl: consumer.url('/one'), requestedBy: 'ui' });
    consumer.respond = (_request, res) => {
      res.writeHead(404);
      res.end();
    };
    const second = await t.sb.replays.replay({ eventId: id, targetUrl: consumer.url('/two'), requestedBy: 'mcp', resign: false });
    const third = await t.sb.replays.replay({ eventId: id, targetUrl: `http://127.0.0.1:${await closedPort()}/`, requestedBy: 'ui' });
    const history = await t.sb.replays.history(id);
    expect(history.map((row) => row.id)).toEqual([third.id, second.id, first.id]);
    expect(history[1]).toMatchObject({ target_url: consumer.url('/two'), response_status: 404, resigned: false, requested_by: 'mcp', delivered: true });
    expect(history[0]).toMatchObject({ delivered: false });
    expect(history[2]).toEqual(first);
  });

  it('writes no secret to the logs', () => {
    const text = t.logger.lines.join('\n');
    for (const secret of [GITHUB_SECRET, STRIPE_SECRET, SLACK_SECRET, DOCKER_TOKEN]) expect(text).not.toContain(secret);
  });
});
