import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStreamConfigSchema, type RedisStreamConfig } from '../../../src/core/config.js';
import { migrationsDir } from '../../../src/core/paths.js';
import type { QueueDeps } from '../../../src/core/queue/redis-link.js';
import { RedisStreamAdapter } from '../../../src/core/queue/redis-stream.js';
import { EventStore } from '../../../src/core/store/event-store.js';
import { migrate } from '../../../src/core/store/migrations.js';
import { openPglite } from '../../../src/core/store/sql-client.js';
import type { EventSummary, Rejection } from '../../../src/shared/events.js';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { addProviders, deleteTestKeys, REDIS_URL, sharedRedisAvailable, testClient, unique, waitFor, waitForStatus } from './redis-helpers.js';

const redisUp = await sharedRedisAvailable();

describe.skipIf(!redisUp)('redis-stream provider', () => {
  let t: TestSwitchboard;
  let redis: Redis;
  let deps: QueueDeps;
  const seen: EventSummary[] = [];
  const rejected: Rejection[] = [];

  beforeAll(async () => {
    t = await startTestSwitchboard({}, { env: { REDIS_URL } });
    deps = { store: t.sb.store, bus: t.sb.bus, providers: t.sb.providers, logger: t.sb.logger };
    t.sb.bus.on('event', (event) => seen.push(event));
    t.sb.bus.on('rejection', (rejection) => rejected.push(rejection));
    redis = testClient();
  });
  afterAll(async () => {
    await t?.close();
    if (redis) await deleteTestKeys(redis);
    redis?.disconnect();
  });

  const streamProvider = (name: string, stream: string, extra: Partial<RedisStreamConfig> = {}): RedisStreamConfig =>
    RedisStreamConfigSchema.parse({ name, kind: 'redis-stream', url: { env: 'REDIS_URL' }, stream, group: 'sb', consumer: `${name}-consumer`, ...extra });

  const eventsOf = async (provider: string, count: number) =>
    waitFor(`${count} events of ${provider}`, async () => {
      const page = await t.sb.store.listEvents({ provider, limit: 50 });
      return page.items.length >= count ? page.items.reverse() : undefined;
    });

  /** Entries handed out to the group and not acked yet. */
  const pendingCount = async (stream: string, group = 'sb') => Number(((await redis.call('XPENDING', stream, group)) as unknown[])[0]);

  const waitNothingPending = (stream: string) => waitFor(`nothing pending on ${stream}`, async () => (await pendingCount(stream)) === 0);

  /** Kills switchboard's connection for a provider from the server side, as a crash would. */
  const killConnections = async (provider: string) => {
    const ids = String(await redis.call('CLIENT', 'LIST'))
      .split('\n')
      .filter((line) => line.includes(` name=switchboard:${provider} `))
      .map((line) => /\bid=(\d+)/.exec(line)![1]!);
    for (const id of ids) await redis.call('CLIENT', 'KILL', 'ID', id);
    return ids.length;
  };

  it('stores an entry, then acks it (XPENDING empty)', async () => {
    const stream = unique('jobs');
    await addProviders(t, streamProvider('jobs', stream));
    const status = await waitForStatus(t, 'jobs', 'connected');
    expect(status).toMatchObject({ kind: 'redis-stream', family: 'queue', trust_mode: 'queue', channel: stream });

    const id = await redis.xadd(stream, '*', 'type', 'job.finished', 'payload', '{"job":42,"ok":true}');
    const [summary] = await eventsOf('jobs', 1);
    const event = await t.sb.store.getEvent(summary!.id);
    expect(event).toMatchObject({
      provider: 'jobs',
      family: 'queue',
      trust_mode: 'queue',
      verified: false,
      verify_detail: 'redis acl: default',
      event_type: 'job.finished',
      external_id: id,
      content_type: 'application/json',
      headers: { 'x-redis-stream': stream, 'x-redis-entry-id': id, 'x-redis-group': 'sb' },
    });
    expect(Buffer.from(event!.payload).toString()).toBe('{"job":42,"ok":true}');
    await waitNothingPending(stream);
    expect(seen.filter((e) => e.provider === 'jobs')).toHaveLength(1);
  });

  it('takes the payload from `data`, else the whole entry; the type from the entry or its JSON payload', async () => {
    const stream = unique('shapes');
    await addProviders(t, streamProvider('shapes', stream, { type_field: 'kind' }));
    await waitForStatus(t, 'shapes', 'connected');
    await redis.xadd(stream, '*', 'data', '{"kind":"from.json","x":1}');
    await redis.xadd(stream, '*', 'kind', 'order.paid', 'order', '7', 'amount', '12.50');
    await redis.xadd(stream, '*', 'data', 'not json');

    const events = await Promise.all((await eventsOf('shapes', 3)).map((summary) => t.sb.store.getEvent(summary.id)));
    const [fromData, wholeEntry, text] = events.sort((a, b) => a!.external_id!.localeCompare(b!.external_id!));
    expect(fromData).toMatchObject({ event_type: 'from.json', content_type: 'application/json' });
    expect(Buffer.from(fromData!.payload).toString()).toBe('{"kind":"from.json","x":1}');
    expect(wholeEntry).toMatchObject({ event_type: 'order.paid', content_type: 'application/json' });
    expect(JSON.parse(Buffer.from(wholeEntry!.payload).toString())).toEqual({ kind: 'order.paid', order: '7', amount: '12.50' });
    expect(text).toMatchObject({ event_type: null, content_type: 'text/plain; charset=utf-8' });
    await waitNothingPending(stream);
  });

  it('drains its own pending entries first on start', async () => {
    const stream = unique('drain');
    // A previous run of this consumer was handed an entry and never acked it.
    await redis.call('XGROUP', 'CREATE', stream, 'sb', '$', 'MKSTREAM');
    const id = await redis.xadd(stream, '*', 'type', 'left.over');
    await redis.call('XREADGROUP', 'GROUP', 'sb', 'drain-consumer', 'COUNT', '10', 'STREAMS', stream, '>');
    expect(await pendingCount(stream)).toBe(1);

    // claim_idle_ms is long: only the drain (XREADGROUP … 0) can find it.
    await addProviders(t, streamProvider('drain', stream, { claim_idle_ms: 3_600_000 }));
    const [event] = await eventsOf('drain', 1);
    expect(event).toMatchObject({ event_type: 'left.over' });
    expect((await t.sb.store.getEvent(event!.id))!.external_id).toBe(id);
    await waitNothingPending(stream);
  });

  it('stores exactly once when it crashes between storing and XACK', async () => {
    const stream = unique('crash');
    const config = streamProvider('crash', stream);
    let crashed!: (entryId: string) => void;
    const crashedAt = new Promise<string>((resolve) => (crashed = resolve));
    let release!: (error: Error) => void;
    const hung = new Promise<void>((_, reject) => (release = reject));
    hung.catch(() => {});
    const first = new RedisStreamAdapter(deps, config, REDIS_URL, {
      afterStore: async (entryId) => {
        crashed(entryId);
        await hung; // the process "dies" here: stored, never acked
      },
    });
    first.start();
    await waitFor('the group to exist', async () => ((await redis.call('XINFO', 'GROUPS', stream)) as unknown[]).length > 0);

    const id = await redis.xadd(stream, '*', 'type', 'charge.created', 'payload', '{"amount":100}');
    expect(await crashedAt).toBe(id);
    expect((await t.sb.store.listEvents({ provider: 'crash', limit: 10 })).items).toHaveLength(1);
    expect(await pendingCount(stream)).toBe(1);
    expect(await killConnections('crash')).toBe(1);

    // Restart: the same consumer drains its pending entry, the insert dedupes, then it acks.
    const second = new RedisStreamAdapter(deps, config, REDIS_URL);
    second.start();
    try {
      await waitNothingPending(stream);
      const events = (await t.sb.store.listEvents({ provider: 'crash', limit: 10 })).items;
      expect(events).toHaveLength(1);
      expect((await t.sb.store.getEvent(events[0]!.id))!.external_id).toBe(id);
      expect(seen.filter((e) => e.provider === 'crash')).toHaveLength(1);
    } finally {
      const stopping = first.stop();
      release(new Error('crashed'));
      await Promise.all([stopping, second.stop()]);
    }
  });

  it('claims entries a dead consumer left idle longer than claim_idle_ms', async () => {
    const stream = unique('claim');
    await redis.call('XGROUP', 'CREATE', stream, 'sb', '$', 'MKSTREAM');
    const id = await redis.xadd(stream, '*', 'type', 'orphan');
    await redis.call('XREADGROUP', 'GROUP', 'sb', 'dead-consumer', 'COUNT', '10', 'STREAMS', stream, '>');

    await addProviders(t, streamProvider('claim', stream, { claim_idle_ms: 300 }));
    const [event] = await eventsOf('claim', 1);
    expect((await t.sb.store.getEvent(event!.id))!.external_id).toBe(id);
    await waitNothingPending(stream);
  });

  it('turns a poison entry into a rejection and acks it', async () => {
    const stream = unique('poison');
    await redis.call('XGROUP', 'CREATE', stream, 'sb', '$', 'MKSTREAM');
    const id = await redis.xadd(stream, '*', 'type', 'bad', 'payload', 'this entry crashed every consumer');
    // Delivered nine times already and never acked (RETRYCOUNT sets the delivery counter).
    await redis.call('XREADGROUP', 'GROUP', 'sb', 'poison-consumer', 'COUNT', '10', 'STREAMS', stream, '>');
    await redis.call('XCLAIM', stream, 'sb', 'poison-consumer', '0', id!, 'RETRYCOUNT', '9');

    await addProviders(t, streamProvider('poison', stream, { max_deliveries: 5 }));
    const rejection = await waitFor('a poison rejection', async () => (await t.sb.store.listRejections({ provider: 'poison', limit: 10 })).items[0]);
    expect(rejection).toMatchObject({
      provider: 'poison',
      reason: 'poison_entry',
      body_size: Buffer.byteLength('this entry crashed every consumer'),
      body_sha256: createHash('sha256').update('this entry crashed every consumer').digest('hex'),
      headers: { 'x-redis-entry-id': id },
      source_ip: null,
    });
    expect(rejection.hint).toContain(id);
    expect(rejected.map((r) => r.id)).toContain(rejection.id);
    await waitNothingPending(stream);
    expect((await t.sb.store.listEvents({ provider: 'poison', limit: 10 })).items).toHaveLength(0);

    // The group moves on: the next entry is an ordinary event.
    await redis.xadd(stream, '*', 'type', 'good');
    expect((await eventsOf('poison', 1))[0]).toMatchObject({ event_type: 'good' });
  });

  it('waits out a database outage instead of rejecting the entry as poison', async () => {
    // A store of its own, so its tables can be taken away (a real failure, not a stub).
    const sql = await openPglite('memory://');
    await migrate(sql, migrationsDir());
    const store = new EventStore(sql);
    const stream = unique('dbdown');
    await sql.exec('ALTER TABLE events RENAME TO events_away; ALTER TABLE rejections RENAME TO rejections_away;');
    const adapter = new RedisStreamAdapter({ ...deps, store }, streamProvider('dbdown', stream, { max_deliveries: 2 }), REDIS_URL);
    adapter.start();
    try {
      await waitFor('the group to exist', async () => ((await redis.call('XINFO', 'GROUPS', stream)) as unknown[]).length > 0);
      const id = await redis.xadd(stream, '*', 'type', 'survives.outage');
      const failures = () => t.logger.lines.filter((line) => line.includes(`storing entry ${id} failed`)).length;
      await waitFor('more failed inserts than max_deliveries', () => failures() >= 3);
      expect(await pendingCount(stream)).toBe(1);

      await sql.exec('ALTER TABLE events_away RENAME TO events; ALTER TABLE rejections_away RENAME TO rejections;');
      await waitNothingPending(stream);
      const events = (await store.listEvents({ provider: 'dbdown', limit: 10 })).items;
      expect(events.map((event) => event.event_type)).toEqual(['survives.outage']);
      expect((await store.listRejections({ provider: 'dbdown', limit: 10 })).items).toHaveLength(0);
    } finally {
      await adapter.stop();
      await store.close();
    }
  });

  it('re-creates a vanished group from the start of the stream, losing nothing', async () => {
    const stream = unique('regroup');
    await addProviders(t, streamProvider('regroup', stream, { claim_idle_ms: 200 }));
    await waitForStatus(t, 'regroup', 'connected');
    await redis.xadd(stream, '*', 'type', 'before');
    await eventsOf('regroup', 1);

    await redis.call('XGROUP', 'DESTROY', stream, 'sb');
    await redis.xadd(stream, '*', 'type', 'after.1');
    await redis.xadd(stream, '*', 'type', 'after.2');
    const events = await eventsOf('regroup', 3);
    expect(events.map((event) => event.event_type).sort()).toEqual(['after.1', 'after.2', 'before']);
    await waitNothingPending(stream);
    // `before` was read again after the re-creation and deduped on its entry id.
    expect((await t.sb.store.listEvents({ provider: 'regroup', limit: 10 })).items).toHaveLength(3);
  });

  it('replays a stream event to an HTTP target with the stored payload as the body', async () => {
    const stream = unique('to-http');
    await addProviders(t, streamProvider('to-http', stream));
    await waitForStatus(t, 'to-http', 'connected');
    await redis.xadd(stream, '*', 'type', 'email.queued', 'payload', '{"to":"a@example.com"}');
    const [summary] = await eventsOf('to-http', 1);

    const received: { body: string; headers: Record<string, string | string[] | undefined> }[] = [];
    const target = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ body: Buffer.concat(chunks).toString(), headers: req.headers });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}/jobs`;
      const replay = await t.sb.replays.replay({ eventId: summary!.id, targetUrl: url, requestedBy: 'ui' });
      expect(replay).toMatchObject({ delivered: true, response_status: 200 });
      expect(received).toHaveLength(1);
      expect(received[0]!.body).toBe('{"to":"a@example.com"}');
      expect(received[0]!.headers).toMatchObject({ 'content-type': 'application/json', 'x-switchboard-replay': String(summary!.id) });
    } finally {
      target.close();
    }
  });
});
