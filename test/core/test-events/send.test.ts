import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../../../src/core/config.js';
import { TEST_MARK_HEADER } from '../../../src/core/test-marks.js';
import { setPath } from '../../../src/core/dot-path.js';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { startConsumer, type Consumer } from '../replay/consumer.js';
import { deleteTestKeys, REDIS_URL, sharedRedisAvailable, testClient, unique, waitForStatus } from '../queue/redis-helpers.js';

const GITHUB_SECRET = 'gh-secret-for-test-events';
const STREAM = unique('test-events-stream');
const CHANNEL = unique('test-events-channel');
const redisUp = await sharedRedisAvailable();

const config: ConfigInput = {
  providers: [
    { name: 'github', kind: 'github', secrets: [{ value: GITHUB_SECRET }] },
    { name: 'stripe', kind: 'stripe', secrets: [{ env: 'STRIPE_WEBHOOK_SECRET' }] },
    { name: 'slack', kind: 'slack', secrets: [{ value: 'slack-signing-secret' }] },
    { name: 'sms', kind: 'twilio', secrets: [{ value: 'twilio-auth-token' }] },
    { name: 'off', kind: 'github', enabled: false, secrets: [{ value: 'x-secret-value' }] },
    ...(redisUp
      ? [
          { name: 'jobs', kind: 'redis-stream' as const, url: { value: REDIS_URL }, stream: STREAM, type_field: 'kind' },
          { name: 'deploys', kind: 'redis-pubsub' as const, url: { value: REDIS_URL }, channels: [CHANNEL] },
        ]
      : []),
  ],
};

let t: TestSwitchboard;
let consumer: Consumer;
beforeAll(async () => {
  consumer = await startConsumer('127.0.0.1');
  t = await startTestSwitchboard({
    ...config,
    providers: [...config.providers!, { name: 'forwarded', kind: 'github', secrets: [{ value: GITHUB_SECRET }], forward_to: [consumer.url('/hooks')] }],
  });
});
afterAll(async () => {
  await t?.close();
  await consumer?.close();
  if (redisUp) {
    const redis = testClient();
    await deleteTestKeys(redis);
    redis.disconnect();
  }
});

const send = (input: Parameters<TestSwitchboard['sb']['api']['sendTestEvent']>[0]) => t.sb.api.sendTestEvent(input);
const payloadOf = async (id: number) => JSON.parse(Buffer.from((await t.sb.store.getEvent(id))!.payload).toString());

describe('sendTestEvent', () => {
  it('sends the kind’s first fixture by default, through the receiver, as a new TEST event each time', async () => {
    const seen: number[] = [];
    t.sb.bus.on('event', (event) => seen.push(event.id));
    const { event } = await send({ provider: 'github' });
    expect(event).toMatchObject({ provider: 'github', event_type: 'push', origin: 'test', trust_mode: 'signed', verified: true });
    expect(seen).toContain(event.id); // live, like any delivery
    const detail = await t.sb.api.getEvent({ id: event.id });
    expect(detail.event.verify_detail).toMatch(/X-Hub-Signature-256 verified/);
    expect(detail.event.headers['x-github-event']).toBe('push');
  });

  it('runs forward rules like a real delivery: the consumer gets it, re-signed', async () => {
    const next = consumer.nextRequest();
    const { event } = await send({ provider: 'forwarded', event_type: 'issues.opened' });
    const received = await next;
    expect(received.headers['x-github-event']).toBe('issues');
    expect(received.headers['x-switchboard-replay']).toBe(String(event.id));
    expect(received.headers['x-hub-signature-256']).toBe(`sha256=${createHmac('sha256', GITHUB_SECRET).update(received.body).digest('hex')}`);
    expect(received.headers[TEST_MARK_HEADER]).toBeUndefined();
  });

  it('applies overrides by dot path (JSON values, array indexes, new keys) before signing', async () => {
    const { event } = await send({
      provider: 'github',
      event_type: 'push',
      overrides: { ref: 'refs/heads/release', 'commits.0.message': 'Hotfix', 'repository.owner.login': 'acme', 'extra.nested': [1, 2] },
    });
    expect(event.verified).toBe(true);
    const body = await payloadOf(event.id);
    expect(body.ref).toBe('refs/heads/release');
    expect(body.commits[0].message).toBe('Hotfix');
    expect(body.repository.owner.login).toBe('acme');
    expect(body.extra).toEqual({ nested: [1, 2] });
  });

  it('overrides form fields of form-encoded fixtures', async () => {
    const { event } = await send({ provider: 'slack', event_type: 'slash_command', overrides: { command: '/rollback', text: 'api' } });
    expect(event).toMatchObject({ event_type: 'command /rollback', verified: true, origin: 'test' });
  });

  it('sends a whole payload as given, signed', async () => {
    const { event } = await send({ provider: 'github', event_type: 'ping', payload: '{"zen":"Keep it logically awesome."}' });
    expect(event).toMatchObject({ event_type: 'ping', verified: true });
    expect(Buffer.from((await t.sb.store.getEvent(event.id))!.payload).toString()).toBe('{"zen":"Keep it logically awesome."}');
  });

  it('refuses an unknown provider, naming the configured ones', async () => {
    await expect(send({ provider: 'gihub' })).rejects.toMatchObject({ code: 'invalid_argument', message: expect.stringMatching(/no provider named "gihub"; configured: github, stripe, slack, sms, off/) });
  });

  it('refuses an unknown event type, naming the kind’s fixtures', async () => {
    await expect(send({ provider: 'github', event_type: 'pushh' })).rejects.toMatchObject({
      code: 'invalid_argument',
      message: 'provider "github" (github) has no test event "pushh"; choose one of: push, pull_request.opened, ping, issues.opened',
    });
  });

  it('refuses a provider without a usable secret, naming where the secret should come from', async () => {
    await expect(send({ provider: 'stripe' })).rejects.toMatchObject({ code: 'invalid_argument', message: expect.stringContaining('env STRIPE_WEBHOOK_SECRET') });
  });

  it('refuses Twilio without receiver.public_url, and a disabled provider', async () => {
    await expect(send({ provider: 'sms' })).rejects.toMatchObject({ code: 'invalid_argument', message: expect.stringContaining('receiver.public_url') });
    await expect(send({ provider: 'off' })).rejects.toMatchObject({ code: 'invalid_argument', message: expect.stringContaining('disabled') });
  });

  it('refuses bad overrides', async () => {
    await expect(send({ provider: 'github', overrides: { '__proto__.polluted': 1 } })).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(send({ provider: 'github', overrides: { 'a..b': 1 } })).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(send({ provider: 'github', overrides: { 'commits.9.message': 'x' } })).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(send({ provider: 'github', payload: '{}', overrides: { a: 1 } })).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('lists the catalog per provider', async () => {
    const { test_events } = await t.sb.api.listTestEvents({ provider: 'slack' });
    expect(test_events.map((entry) => entry.event_type)).toEqual(['message', 'app_mention', 'slash_command']);
    const all = await t.sb.api.listTestEvents({});
    expect(new Set(all.test_events.map((entry) => entry.provider))).toEqual(new Set([...config.providers!.map((provider) => provider.name), 'forwarded']));
    await expect(t.sb.api.listTestEvents({ provider: 'nope' })).rejects.toMatchObject({ code: 'invalid_argument' });
  });
});

describe('the test mark', () => {
  const githubHeaders = (body: string, extra: Record<string, string>) => ({
    'content-type': 'application/json',
    'x-github-event': 'ping',
    'x-hub-signature-256': `sha256=${createHmac('sha256', GITHUB_SECRET).update(body).digest('hex')}`,
    ...extra,
  });

  it('cannot be forged by a sender: a made-up mark is stored redacted and the event is a provider event', async () => {
    const body = '{"zen":"forged"}';
    const answer = await t.deliver('/webhooks/github', body, githubHeaders(body, { 'x-github-delivery': 'forged-1', [TEST_MARK_HEADER]: 'deadbeef.cafebabe' }));
    expect(answer.status).toBe(200);
    const stored = (await t.sb.store.getEvent(answer.json.id))!;
    expect(stored.origin).toBe('provider');
    expect(stored.headers[TEST_MARK_HEADER]).toBe('«redacted»');
  });

  it('is good for one delivery of one body: a captured mark replayed, or moved to another body, is not a test event', async () => {
    const marks = t.sb.testEvents.deps.marks;
    const body = '{"zen":"marked"}';
    const pending = marks.expectDelivery('github', Buffer.from(body));
    // Another body with the same mark: not ours.
    const other = '{"zen":"other"}';
    const moved = await t.deliver('/webhooks/github', other, githubHeaders(other, { 'x-github-delivery': 'moved-1', [TEST_MARK_HEADER]: pending.header }));
    expect((await t.sb.store.getEvent(moved.json.id))!.origin).toBe('provider');
    // The right body: a test event, once.
    const first = await t.deliver('/webhooks/github', body, githubHeaders(body, { 'x-github-delivery': 'marked-1', [TEST_MARK_HEADER]: pending.header }));
    expect((await pending.stored).id).toBe(first.json.id);
    expect((await t.sb.store.getEvent(first.json.id))!.origin).toBe('test');
    const replayed = await t.deliver('/webhooks/github', body, githubHeaders(body, { 'x-github-delivery': 'marked-2', [TEST_MARK_HEADER]: pending.header }));
    expect((await t.sb.store.getEvent(replayed.json.id))!.origin).toBe('provider');
  });
});

describe.skipIf(!redisUp)('queue providers', () => {
  it('XADDs to the stream and PUBLISHes to the channel: the real queue path stores a TEST event', async () => {
    await waitForStatus(t, 'jobs', 'connected');
    await waitForStatus(t, 'deploys', 'connected');
    const fromStream = (await send({ provider: 'jobs', overrides: { 'data.attempt': 2 } })).event;
    expect(fromStream).toMatchObject({ provider: 'jobs', family: 'queue', trust_mode: 'queue', origin: 'test', event_type: 'switchboard.test' });
    expect(fromStream.external_id).toMatch(/^\d+-\d+$/); // the stream entry id
    expect((await payloadOf(fromStream.id)).data.attempt).toBe(2);
    expect((await payloadOf(fromStream.id)).kind).toBe('switchboard.test'); // the provider's type_field

    const fromChannel = (await send({ provider: 'deploys' })).event;
    expect(fromChannel).toMatchObject({ provider: 'deploys', family: 'queue', origin: 'test', event_type: 'switchboard.test' });
    expect((await t.sb.store.getEvent(fromChannel.id))!.headers['x-redis-channel']).toBe(CHANNEL);
  });
});

describe('setPath', () => {
  it('creates what is missing and indexes arrays', () => {
    const target: Record<string, unknown> = { a: [{ b: 1 }] };
    setPath(target, 'a.0.b', 2);
    setPath(target, 'a.1', 'x');
    setPath(target, 'c.d.e', null);
    expect(target).toEqual({ a: [{ b: 2 }, 'x'], c: { d: { e: null } } });
  });
});
