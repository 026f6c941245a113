import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import type { ProviderConfig } from '../../../src/core/config.js';
import { SturdyConnector } from '../../../src/core/queue/redis-connector.js';
import type { TestSwitchboard } from '../../helpers/core.js';
import type { ProviderStatus } from '../../../src/shared/providers.js';

export const REDIS_URL = process.env.SWITCHBOARD_TEST_REDIS ?? 'redis://127.0.0.1:6379';

/**
 * Whether the shared Redis answers. Outside CI a missing Redis skips the queue tests with a
 * loud message; in CI it fails the run.
 */
export async function sharedRedisAvailable(): Promise<boolean> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 2_000 });
  let cause: Error | undefined;
  redis.on('error', (error: Error) => (cause ??= error));
  try {
    await redis.connect();
    await redis.ping();
    return true;
  } catch (error) {
    if (process.env.CI) throw new Error(`Redis is required in CI (${REDIS_URL}): ${(cause ?? (error as Error)).message}`);
    console.warn(`\n*** Redis not reachable at ${REDIS_URL}: SKIPPING the queue tests (set CI=1 to make this a failure) ***\n`);
    return false;
  } finally {
    redis.disconnect();
  }
}

export function redisServerAvailable(): boolean {
  const found = spawnSync('redis-server', ['--version']).status === 0;
  if (!found) {
    if (process.env.CI) throw new Error('redis-server is required in CI for the Redis restart tests');
    console.warn('\n*** redis-server not installed: SKIPPING the Redis restart/TLS tests ***\n');
  }
  return found;
}

/** A test client of the shared Redis; the caller disconnects it. */
export function testClient(url = REDIS_URL, options: RedisOptions = {}): Redis {
  // Switchboard's connector: a second error on a TLS socket would be an uncaught exception.
  const redis = new Redis(url, { protocol: 2, Connector: SturdyConnector, ...options });
  redis.on('error', () => {});
  return redis;
}

/** Deletes the keys this test process created on the shared Redis (see `unique`). */
export async function deleteTestKeys(redis: Redis): Promise<void> {
  const keys = await redis.keys(`switchboard-test:*:${process.pid}:*`);
  if (keys.length > 0) await redis.del(...keys);
}

/** A name no other test (or earlier run) uses. */
export function unique(prefix: string): string {
  return `switchboard-test:${prefix}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function statusOf(t: TestSwitchboard, name: string): ProviderStatus | undefined {
  return t.sb.providers.statuses().find((provider) => provider.name === name);
}

export function waitForStatus(t: TestSwitchboard, name: string, status: ProviderStatus['status'], timeoutMs = 20_000): Promise<ProviderStatus> {
  return waitFor(`provider ${name} to be ${status} (is ${JSON.stringify(statusOf(t, name))})`, () => {
    const current = statusOf(t, name);
    return current?.status === status ? current : undefined;
  }, timeoutMs);
}

/** Adds providers to the running switchboard the way the UI does (live config reload). */
export async function addProviders(t: TestSwitchboard, ...providers: ProviderConfig[]): Promise<void> {
  await t.sb.updateConfig({ ...t.sb.config, providers: [...t.sb.config.providers, ...providers] });
}

export async function removeProvider(t: TestSwitchboard, name: string): Promise<void> {
  await t.sb.updateConfig({ ...t.sb.config, providers: t.sb.config.providers.filter((provider) => provider.name !== name) });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * A private redis-server on a random port, for tests that stop and restart Redis (never the
 * shared one on 6379). No persistence: a restart comes back empty, like a dev laptop's Redis.
 */
export class PrivateRedis {
  private child: ChildProcess | undefined;
  readonly dir = mkdtempSync(join(tmpdir(), 'switchboard-redis-'));

  private constructor(
    readonly port: number,
    private readonly extraArgs: string[],
  ) {}

  static async start(extraArgs: string[] = [], options: { tls?: boolean } = {}): Promise<PrivateRedis> {
    const server = await PrivateRedis.reserve(extraArgs, options);
    await server.start();
    return server;
  }

  /** A port and arguments, not started yet: for "Redis is down when switchboard starts". */
  static async reserve(extraArgs: string[] = [], options: { tls?: boolean } = {}): Promise<PrivateRedis> {
    const port = await freePort();
    const args = options.tls ? ['--port', '0', '--tls-port', String(port), ...extraArgs] : ['--port', String(port), ...extraArgs];
    return new PrivateRedis(port, args);
  }

  async start(): Promise<void> {
    const child = spawn('redis-server', ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--dir', this.dir, ...this.extraArgs], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), 10_000);
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}: ${output}`));
      });
    });
  }

  /** Stops the server abruptly (SIGKILL: no goodbye to the clients, like a crash). */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    this.child = undefined;
  }

  async close(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A self-signed CA and a server certificate for 127.0.0.1/localhost, made with openssl. */
export function makeTlsFiles(dir: string): { ca: string; cert: string; key: string } | null {
  const ca = join(dir, 'ca.pem');
  const caKey = join(dir, 'ca-key.pem');
  const cert = join(dir, 'server.pem');
  const key = join(dir, 'server-key.pem');
  const csr = join(dir, 'server.csr');
  const ext = join(dir, 'server.ext');
  const run = (args: string[]) => spawnSync('openssl', args, { encoding: 'utf8' });
  if (run(['version']).status !== 0) return null;
  writeFileSync(ext, 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  const steps = [
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', caKey, '-out', ca, '-days', '2', '-subj', '/CN=switchboard test CA'],
    ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', '/CN=localhost'],
    ['x509', '-req', '-in', csr, '-CA', ca, '-CAkey', caKey, '-CAcreateserial', '-out', cert, '-days', '2', '-extfile', ext],
  ];
  for (const args of steps) {
    const result = run(args);
    if (result.status !== 0) throw new Error(`openssl ${args[0]} failed: ${result.stderr}`);
  }
  return { ca, cert, key };
}
