import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStreamConfigSchema } from '../../../src/core/config.js';
import { RedisStreamAdapter } from '../../../src/core/queue/redis-stream.js';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { makeTlsFiles, PrivateRedis, redisServerAvailable, statusOf, testClient, waitFor, waitForStatus } from './redis-helpers.js';

/**
 * Against private redis-server processes (never the shared one): Redis going away and coming
 * back, credentials in the URL, and TLS.
 */

const PASSWORD = 'Sup3r-secret-redis-pw';
const ALICE_PASSWORD = 'alice-Secret-9x7';
const WRONG_PASSWORD = 'wrong-Password-4q2';

const serverUp = redisServerAvailable();

describe.skipIf(!serverUp)('Redis outages and credentials', () => {
  let t: TestSwitchboard;
  let server: PrivateRedis;

  beforeAll(async () => {
    // Users are given on the command line so they survive a restart without persistence.
    server = await PrivateRedis.start(['--requirepass', PASSWORD, '--user', 'alice', 'on', `>${ALICE_PASSWORD}`, '~*', '&*', '+@all']);
    const base = `127.0.0.1:${server.port}`;
    t = await startTestSwitchboard(
      {
        providers: [
          { name: 'orders', kind: 'redis-stream', url: { env: 'ORDERS_URL' }, stream: 'orders', group: 'sb', consumer: 'orders-1' },
          { name: 'pings', kind: 'redis-pubsub', url: { env: 'PINGS_URL' }, channels: ['pings'] },
          { name: 'badauth', kind: 'redis-pubsub', url: { env: 'BAD_URL' }, channels: ['pings'] },
        ],
      },
      {
        env: {
          ORDERS_URL: `redis://alice:${encodeURIComponent(ALICE_PASSWORD)}@${base}`,
          PINGS_URL: `redis://:${PASSWORD}@${base}/0`,
          BAD_URL: `redis://alice:${WRONG_PASSWORD}@${base}`,
        },
      },
    );
  });
  afterAll(async () => {
    await t?.close();
    await server?.close();
  });

  const client = () => testClient(`redis://:${PASSWORD}@127.0.0.1:${server.port}`);

  const eventTypes = async (provider: string) => (await t.sb.store.listEvents({ provider, limit: 100 })).items.map((event) => event.event_type).sort();

  it('acts as the ACL user of the URL and says so in verify_detail', async () => {
    await waitForStatus(t, 'orders', 'connected');
    const redis = client();
    try {
      await redis.xadd('orders', '*', 'type', 'order.created');
      await waitFor('the first order', async () => (await eventTypes('orders')).length === 1);
      const [summary] = (await t.sb.store.listEvents({ provider: 'orders', limit: 1 })).items;
      expect((await t.sb.store.getEvent(summary!.id))!.verify_detail).toBe('redis acl: alice');
    } finally {
      redis.disconnect();
    }
  });

  it('reports a wrong password as an error without showing it', async () => {
    const status = await waitForStatus(t, 'badauth', 'error');
    expect(status.last_error).toMatch(/WRONGPASS|invalid username-password/);
    expect(status.last_error).not.toContain(WRONG_PASSWORD);
  });

  it('goes to error when Redis dies, back to connected when it returns, and loses nothing published meanwhile', async () => {
    await waitForStatus(t, 'pings', 'connected');
    await server.stop();
    const down = await waitForStatus(t, 'orders', 'error');
    expect(down.last_error).toBeTruthy();
    expect((await waitForStatus(t, 'pings', 'error')).last_error).toBeTruthy();

    // Redis comes back empty (no persistence) and a producer writes before switchboard is back.
    await server.start();
    const redis = client();
    try {
      await redis.xadd('orders', '*', 'type', 'order.paid');
      await redis.xadd('orders', '*', 'type', 'order.shipped');
      await waitForStatus(t, 'orders', 'connected');
      await waitFor('the orders written during the outage', async () => (await eventTypes('orders')).length === 3);
      expect(await eventTypes('orders')).toEqual(['order.created', 'order.paid', 'order.shipped']);
      await waitFor('every order acked', async () => Number(((await redis.call('XPENDING', 'orders', 'sb')) as unknown[])[0]) === 0);

      // The pub/sub provider subscribed again on its new connection.
      await waitForStatus(t, 'pings', 'connected');
      expect(statusOf(t, 'pings')!.last_error).toBeUndefined();
      await waitFor('the resubscription', async () => (await redis.publish('pings', '{"type":"ping"}')) >= 1);
      await waitFor('the ping', async () => (await eventTypes('pings')).includes('ping'));
    } finally {
      redis.disconnect();
    }
  });

  it('never puts a password in a log line, a status or an event', async () => {
    const kept = JSON.stringify({
      logs: t.logger.lines,
      statuses: t.sb.providers.statuses(),
      events: await Promise.all((await t.sb.store.listEvents({ limit: 100 })).items.map((event) => t.sb.store.getEvent(event.id))),
    });
    expect(t.logger.lines.some((line) => line.includes('queue "orders"'))).toBe(true);
    for (const secret of [PASSWORD, ALICE_PASSWORD, encodeURIComponent(ALICE_PASSWORD), WRONG_PASSWORD]) expect(kept).not.toContain(secret);
  });
});

describe.skipIf(!serverUp)('Redis down when switchboard starts', () => {
  let t: TestSwitchboard;
  let server: PrivateRedis;

  beforeAll(async () => {
    server = await PrivateRedis.reserve();
    t = await startTestSwitchboard({
      providers: [{ name: 'late', kind: 'redis-stream', url: { value: `redis://127.0.0.1:${server.port}` }, stream: 'late' }],
    });
  });
  afterAll(async () => {
    await t?.close();
    await server?.close();
  });

  it('keeps retrying until Redis is up, then consumes', async () => {
    expect((await waitForStatus(t, 'late', 'error')).last_error).toContain('ECONNREFUSED');
    await server.start();
    await waitForStatus(t, 'late', 'connected');
    const redis = testClient(`redis://127.0.0.1:${server.port}`);
    try {
      await redis.xadd('late', '*', 'type', 'finally');
      await waitFor('the event', async () => (await t.sb.store.listEvents({ provider: 'late', limit: 5 })).items[0]);
    } finally {
      redis.disconnect();
    }
  });
});

describe.skipIf(!serverUp)('rediss:// (TLS)', () => {
  let t: TestSwitchboard;
  let server: PrivateRedis | undefined;
  const certDir = mkdtempSync(join(tmpdir(), 'switchboard-tls-'));
  const tls = makeTlsFiles(certDir);

  beforeAll(async () => {
    if (!tls) return;
    server = await PrivateRedis.start(
      ['--tls-cert-file', tls.cert, '--tls-key-file', tls.key, '--tls-ca-cert-file', tls.ca, '--tls-auth-clients', 'no'],
      { tls: true },
    );
    t = await startTestSwitchboard({
      providers: [
        { name: 'secure', kind: 'redis-stream', url: { value: `rediss://127.0.0.1:${server.port}` }, stream: 'secure' },
        { name: 'shouting', kind: 'redis-pubsub', url: { value: `REDISS://127.0.0.1:${server.port}` }, channels: ['x'] },
      ],
    });
  });
  afterAll(async () => {
    await t?.close();
    await server?.close();
    rmSync(certDir, { recursive: true, force: true });
  });

  it.skipIf(!tls)('uses TLS with certificate verification for rediss:// in any letter case', async () => {
    // The test CA is not trusted by this process: the handshake must fail on the certificate.
    expect((await waitForStatus(t, 'secure', 'error')).last_error).toMatch(/certificate/i);
    expect((await waitForStatus(t, 'shouting', 'error')).last_error).toMatch(/certificate/i);
  });

  it.skipIf(!tls)('consumes a stream over TLS when the CA is trusted', async () => {
    const config = RedisStreamConfigSchema.parse({ name: 'secure-trusted', kind: 'redis-stream', url: { value: 'unused' }, stream: 'secure-trusted', consumer: 'c' });
    const adapter = new RedisStreamAdapter({ store: t.sb.store, bus: t.sb.bus, providers: t.sb.providers, logger: t.sb.logger }, config, `rediss://localhost:${server!.port}`, {
      tls: { ca: readFileSync(tls!.ca) },
    });
    adapter.start();
    const producer = testClient(`rediss://localhost:${server!.port}`, { tls: { ca: readFileSync(tls!.ca) } });
    try {
      await waitFor('the group', async () => ((await producer.call('XINFO', 'GROUPS', 'secure-trusted').catch(() => [])) as unknown[]).length > 0);
      const id = await producer.xadd('secure-trusted', '*', 'type', 'over.tls');
      const [event] = await waitFor('the TLS event', async () => {
        const items = (await t.sb.store.listEvents({ provider: 'secure-trusted', limit: 5 })).items;
        return items.length > 0 ? items : undefined;
      });
      expect(event).toMatchObject({ event_type: 'over.tls', trust_mode: 'queue' });
      expect((await t.sb.store.getEvent(event!.id))!.external_id).toBe(id);
    } finally {
      producer.disconnect();
      await adapter.stop();
    }
  });
});
