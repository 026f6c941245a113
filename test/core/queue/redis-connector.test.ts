import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SturdyConnector } from '../../../src/core/queue/redis-connector.js';
import { REDIS_URL, sharedRedisAvailable, waitFor } from './redis-helpers.js';

const redisUp = await sharedRedisAvailable();

/**
 * The socket under every Redis connection: a second error on one socket (a TLS handshake
 * refused, then the server's alert — seen in CI as "tlsv1 alert decode error") must not become
 * an uncaught exception. The sockets are real; the second error is emitted on them because a
 * TLS server cannot be made to send it on cue.
 */

describe('SturdyConnector', () => {
  let server: Server;
  let port: number;
  const accepted: Socket[] = [];

  beforeAll(async () => {
    // Accepts and stays silent, so a connection is open (and never ready) while errors arrive.
    server = createServer((socket) => accepted.push(socket));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const socket of accepted) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  const openSilent = async (options: { Connector?: typeof SturdyConnector }) => {
    const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, ...options });
    const seen: string[] = [];
    redis.on('error', (error: Error) => seen.push(error.message));
    redis.connect().catch(() => {});
    const stream = await waitFor('the socket', () => (redis as unknown as { stream?: Socket }).stream);
    await waitFor('the connection', () => !stream.connecting);
    return { redis, stream, seen };
  };

  it('reports the first error of a socket and drops the later ones', async () => {
    const { redis, stream, seen } = await openSilent({ Connector: SturdyConnector });
    try {
      stream.emit('error', new Error('self-signed certificate in certificate chain'));
      expect(() => stream.emit('error', new Error('tlsv1 alert decode error'))).not.toThrow();
      await waitFor('the reported error', () => seen.length > 0);
      expect(seen).toEqual(['self-signed certificate in certificate chain']);
    } finally {
      redis.disconnect();
    }
  });

  it('is needed: with ioredis’s own connector the second error is thrown', async () => {
    const { redis, stream } = await openSilent({});
    try {
      stream.emit('error', new Error('first'));
      expect(() => stream.emit('error', new Error('second'))).toThrow('second');
    } finally {
      redis.disconnect();
    }
  });

  it.skipIf(!redisUp)('connects and answers like the standalone connector', async () => {
    const redis = new Redis(REDIS_URL, { Connector: SturdyConnector, lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await redis.connect();
      expect(await redis.ping()).toBe('PONG');
    } finally {
      redis.disconnect();
    }
  });
});
