import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventSummary } from '../../../src/shared/events.js';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { addProviders, REDIS_URL, removeProvider, sharedRedisAvailable, statusOf, testClient, unique, waitFor, waitForStatus } from './redis-helpers.js';

const redisUp = await sharedRedisAvailable();

describe.skipIf(!redisUp)('redis-pubsub provider', () => {
  let t: TestSwitchboard;
  let redis: Redis;
  const seen: EventSummary[] = [];

  beforeAll(async () => {
    t = await startTestSwitchboard({}, { env: { REDIS_URL } });
    t.sb.bus.on('event', (event) => seen.push(event));
    redis = testClient();
  });
  afterAll(async () => {
    redis?.disconnect();
    await t?.close();
  });

  const eventsOf = async (provider: string, count: number) =>
    waitFor(`${count} events of ${provider}`, async () => {
      const page = await t.sb.store.listEvents({ provider, limit: 50 });
      return page.items.length >= count ? page.items.reverse() : undefined;
    });

  /** Connections switchboard holds for a provider, as Redis sees them. */
  const connectionsOf = async (provider: string) =>
    String(await redis.call('CLIENT', 'LIST'))
      .split('\n')
      .filter((line) => line.includes(` name=switchboard:${provider} `)).length;

  it('stores a channel message with the queue trust shape and emits it', async () => {
    const channel = unique('deploys');
    await addProviders(t, { name: 'deploys', kind: 'redis-pubsub', url: { env: 'REDIS_URL' }, channels: [channel], patterns: [], type_field: 'type', enabled: true, forward_to: [] });
    const status = await waitForStatus(t, 'deploys', 'connected');
    expect(status).toMatchObject({ kind: 'redis-pubsub', family: 'queue', trust_mode: 'queue', secret_status: 'configured', channel });
    expect(status.last_error).toBeUndefined();

    const message = JSON.stringify({ type: 'deploy.finished', service: 'api', n: 1 });
    expect(await redis.publish(channel, message)).toBe(1);
    const [summary] = await eventsOf('deploys', 1);
    const event = await t.sb.store.getEvent(summary!.id);
    expect(event).toMatchObject({
      provider: 'deploys',
      family: 'queue',
      trust_mode: 'queue',
      verified: false,
      verify_detail: 'redis acl: default',
      event_type: 'deploy.finished',
      external_id: null,
      content_type: 'application/json',
      source_ip: null,
      headers: { 'x-redis-channel': channel },
      payload_size: Buffer.byteLength(message),
    });
    expect(Buffer.from(event!.payload).toString()).toBe(message);
    expect(seen.filter((e) => e.provider === 'deploys').map((e) => e.id)).toEqual([summary!.id]);
  });

  it('subscribes to patterns, keeps bytes exactly and does not dedupe repeated messages', async () => {
    const prefix = unique('audit');
    await addProviders(t, {
      name: 'audit',
      kind: 'redis-pubsub',
      url: { env: 'REDIS_URL' },
      channels: [],
      patterns: [`${prefix}:*`],
      type_field: 'kind',
      enabled: true,
      forward_to: [],
    });
    await waitForStatus(t, 'audit', 'connected');
    const binary = Buffer.from([0xff, 0x00, 0xfe, 0x41]);
    await redis.publish(`${prefix}:login`, JSON.stringify({ kind: 'user.login', type: 'ignored' }));
    await redis.publish(`${prefix}:raw`, binary);
    await redis.publish(`${prefix}:text`, 'plain words');
    await redis.publish(`${prefix}:text`, 'plain words');

    const events = await Promise.all((await eventsOf('audit', 4)).map((summary) => t.sb.store.getEvent(summary.id)));
    const byChannel = (suffix: string) => events.filter((event) => event!.headers['x-redis-channel'] === `${prefix}:${suffix}`);
    expect(byChannel('login')[0]).toMatchObject({ event_type: 'user.login', headers: { 'x-redis-pattern': `${prefix}:*` } });
    expect(Buffer.from(byChannel('raw')[0]!.payload)).toEqual(binary);
    expect(byChannel('raw')[0]).toMatchObject({ event_type: null, content_type: 'application/octet-stream' });
    expect(byChannel('text')).toHaveLength(2);
    expect(byChannel('text')[0]).toMatchObject({ event_type: null, content_type: 'text/plain; charset=utf-8' });
  });

  it('stores odd messages as the bytes they are: deep nesting, __proto__ keys, NUL in the type', async () => {
    const channel = unique('odd');
    await addProviders(t, { name: 'odd', kind: 'redis-pubsub', url: { env: 'REDIS_URL' }, channels: [channel], patterns: [], type_field: 'type', enabled: true, forward_to: [] });
    await waitForStatus(t, 'odd', 'connected');
    const messages = [
      '['.repeat(100_000) + ']'.repeat(100_000),
      `{"type":"deep","data":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}`,
      '{"__proto__":{"polluted":true},"type":"proto"}',
      '{"type":"nul\\u0000here"}',
      '{"type":"raw\u0000byte"}', // not JSON (a control character in a string): no type
      '{"type":{"toString":"x"},"constructor":1}',
    ];
    for (const message of messages) await redis.publish(channel, message);
    const events = await eventsOf('odd', messages.length);
    expect(events.map((event) => event.event_type)).toEqual([null, 'deep', 'proto', 'nul\uFFFDhere', null, null]);
    expect(events.map((event) => event.payload_size)).toEqual(messages.map((message) => Buffer.byteLength(message)));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('does not start a disabled provider', async () => {
    const channel = unique('off');
    await addProviders(
      t,
      { name: 'off', kind: 'redis-pubsub', url: { env: 'REDIS_URL' }, channels: [channel], patterns: [], type_field: 'type', enabled: false, forward_to: [] },
      { name: 'beside-off', kind: 'redis-pubsub', url: { env: 'REDIS_URL' }, channels: [unique('on')], patterns: [], type_field: 'type', enabled: true, forward_to: [] },
    );
    // Both were applied together: once the enabled one is up, the disabled one was decided on.
    await waitForStatus(t, 'beside-off', 'connected');
    expect(statusOf(t, 'off')).toMatchObject({ status: 'disabled', enabled: false });
    expect(await connectionsOf('off')).toBe(0);
    expect(await redis.publish(channel, 'nobody listens')).toBe(0);
  });

  it('reports a missing URL source as an error that names it', async () => {
    await addProviders(t, { name: 'nourl', kind: 'redis-pubsub', url: { env: 'NOT_SET_REDIS_URL' }, channels: ['x'], patterns: [], type_field: 'type', enabled: true, forward_to: [] });
    const status = await waitForStatus(t, 'nourl', 'error');
    expect(status.secret_status).toBe('missing');
    expect(status.last_error).toContain('NOT_SET_REDIS_URL');
  });

  it('restarts on a config change and stops when the provider is removed', async () => {
    const first = unique('first');
    const second = unique('second');
    await addProviders(t, { name: 'moving', kind: 'redis-pubsub', url: { env: 'REDIS_URL' }, channels: [first], patterns: [], type_field: 'type', enabled: true, forward_to: [] });
    await waitForStatus(t, 'moving', 'connected');
    expect(await connectionsOf('moving')).toBe(1);

    await t.sb.updateConfig({
      ...t.sb.config,
      providers: t.sb.config.providers.map((provider) => (provider.name === 'moving' ? { ...provider, channels: [second] } : provider)),
    });
    await waitFor('the restarted subscription', async () => (await redis.publish(second, '{"type":"moved"}')) === 1);
    expect(await redis.publish(first, '{"type":"stale"}')).toBe(0);
    const events = await eventsOf('moving', 1);
    expect(events.map((event) => event.event_type)).toContain('moved');
    expect(await connectionsOf('moving')).toBe(1);

    await removeProvider(t, 'moving');
    await waitFor('the connection to close', async () => (await connectionsOf('moving')) === 0);
  });
});
