import { setTimeout as delay } from 'node:timers/promises';
import type { ConnectionOptions } from 'node:tls';
import { Redis } from 'ioredis';
import type { EventBus } from '../bus.js';
import type { Logger } from '../logger.js';
import type { ProviderSet } from '../provider-set.js';
import type { TestMarks } from '../test-marks.js';
import type { EventStore } from '../store/event-store.js';
import { REDACTED } from '../../shared/events.js';
import { SturdyConnector } from './redis-connector.js';

/**
 * One Redis connection of a queue provider, with the parts both adapters share: reconnecting
 * with a capped backoff, reporting `connecting` / `connected` / `error` to the provider set,
 * and keeping the connection URL secret.
 *
 * Defends against: the URL's password reaching a log line, `last_error` (shown in the UI and
 * over MCP) or an exception message. Every error text that leaves this file goes through
 * `redact`, which removes the URL, its password (raw and percent-encoded) and every other
 * configured secret. A `rediss://` URL always gets TLS with certificate verification on; an
 * upper-case `REDISS://` would slip past ioredis's own (case-sensitive) check, so TLS is
 * decided here from the parsed scheme.
 */

export interface QueueDeps {
  store: EventStore;
  bus: EventBus;
  providers: ProviderSet;
  logger: Logger;
  /** Recognises switchboard's own test messages (absent: none are). */
  testMarks?: TestMarks;
}

export const RECONNECT_BASE_MS = 100;
export const RECONNECT_MAX_MS = 5_000;
export const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Runs `use` on a fresh connection that tries once — no retries, no offline queue: the caller
 * is waiting for an answer (a republish, a test message), not for Redis to come back. A failure
 * is thrown as the connection's own error: with retries off, connect() alone only says
 * "Connection is closed." and the cause arrives as an 'error' event.
 */
export async function withOneShotRedis<T>(url: string, connectionName: string, use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(url, {
    lazyConnect: true,
    protocol: 2,
    ...(new URL(url).protocol === 'rediss:' ? { tls: {} } : {}),
    connectionName,
    Connector: SturdyConnector,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
  });
  let connectionError: Error | undefined;
  redis.on('error', (error: Error) => (connectionError ??= error));
  try {
    await redis.connect();
    return await use(redis);
  } catch (error) {
    throw connectionError ?? error;
  } finally {
    redis.disconnect();
  }
}

/** 100 ms, 200 ms, 400 ms … capped at 5 s, forever: a laptop's Redis comes and goes. */
export function reconnectDelayMs(attempt: number): number {
  return Math.min(RECONNECT_BASE_MS * 2 ** Math.max(0, attempt - 1), RECONNECT_MAX_MS);
}

/** Why a URL cannot be used, in words that do not repeat it; null when it is fine. */
export function redisUrlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'the Redis URL is not a valid URL (expected redis://[user:password@]host:port[/db] or rediss://…)';
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    return `the Redis URL must start with redis:// or rediss:// (got ${parsed.protocol}//)`;
  }
  if (!parsed.hostname) return 'the Redis URL has no host';
  return null;
}

/** The URL itself and the credentials inside it, each of which must never be shown. */
export function secretsOfUrl(url: string): string[] {
  const secrets = [url];
  try {
    const parsed = new URL(url);
    if (parsed.password) secrets.push(parsed.password, decodeURIComponent(parsed.password));
    if (parsed.username && parsed.password) secrets.push(`${parsed.username}:${parsed.password}`);
  } catch {
    // An unparsable URL is still redacted as a whole.
  }
  return secrets;
}

export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  // Longest first, so the URL is replaced before the password inside it.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret.length >= 3) out = out.split(secret).join(REDACTED);
  }
  // Any other credential-bearing Redis URL (e.g. echoed by a proxy) loses its userinfo.
  return out.replace(/(rediss?:\/\/)[^\s/@]*@/gi, `$1${REDACTED}@`);
}

export interface RedisLinkOptions {
  /** Extra TLS options (a private CA in tests); only used with rediss://. */
  tls?: ConnectionOptions;
}

type LinkState = 'connecting' | 'connected' | 'error';

export class RedisLink {
  readonly redis: Redis;
  private readonly abort = new AbortController();
  private readonly secrets: string[];
  private state: LinkState = 'connecting';
  private lastError: string | undefined;
  private loggedError: string | undefined;

  constructor(
    private readonly deps: QueueDeps,
    readonly providerName: string,
    url: string,
    options: RedisLinkOptions = {},
  ) {
    this.secrets = secretsOfUrl(url);
    const tls = new URL(url).protocol === 'rediss:' ? { ...options.tls } : undefined;
    this.redis = new Redis(url, {
      lazyConnect: true,
      // RESP2 keeps XREADGROUP/XAUTOCLAIM replies in their documented array shapes; under RESP3
      // ioredis flattens the stream map into [key, entries].
      protocol: 2,
      ...(tls ? { tls } : {}),
      connectionName: `switchboard:${providerName}`,
      Connector: SturdyConnector,
      connectTimeout: CONNECT_TIMEOUT_MS,
      retryStrategy: reconnectDelayMs,
      // A command in flight when the connection drops fails at once instead of being resent on
      // reconnect: the adapters restart from their own recovery step (re-reading the pending
      // list), which is what makes a lost XREADGROUP reply harmless.
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      enableOfflineQueue: false,
      autoResubscribe: false,
    });
    this.redis.on('error', (error: Error) => this.failed(error));
    this.redis.on('close', () => {
      if (!this.stopped && this.state === 'connected') this.failed(new Error('the connection to Redis was closed'));
    });
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  /** Starts connecting; failures are reported through `error` events and retried forever. */
  connect(): void {
    this.report('connecting');
    this.redis.connect().catch(() => {
      // Reported by the 'error' listener; ioredis keeps retrying with reconnectDelayMs.
    });
  }

  /** Resolves true once the connection is ready, false if the link is stopped first. */
  ready(): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    if (this.redis.status === 'ready') return Promise.resolve(true);
    // Not events.once(): it rejects on the first 'error', and connection errors are expected here.
    return new Promise((resolve) => {
      const done = (ready: boolean) => {
        this.redis.off('ready', onReady);
        this.abort.signal.removeEventListener('abort', onAbort);
        resolve(ready);
      };
      const onReady = () => done(true);
      const onAbort = () => done(false);
      this.redis.on('ready', onReady);
      this.abort.signal.addEventListener('abort', onAbort);
    });
  }

  /** True while commands can be sent; a command failing otherwise is a connection problem. */
  get isReady(): boolean {
    return this.redis.status === 'ready';
  }

  /** Sleeps, waking early when the link is closed. */
  async sleep(ms: number): Promise<void> {
    try {
      await delay(ms, undefined, { signal: this.abort.signal });
    } catch {
      // Aborted: the caller checks `stopped`.
    }
  }

  /** `ACL WHOAMI`: the user this connection acts as, the trust anchor of a queue event. */
  async whoami(): Promise<string> {
    try {
      const user = await this.redis.call('ACL', 'WHOAMI');
      return typeof user === 'string' ? user : String(user);
    } catch {
      // Redis before 6 has no ACLs; every client is the one password-protected user.
      return 'default (no ACL support)';
    }
  }

  connected(): void {
    if (this.stopped) return;
    if (this.state !== 'connected') this.deps.logger.info(`queue "${this.providerName}": connected`);
    this.lastError = undefined;
    this.loggedError = undefined;
    this.report('connected');
  }

  failed(error: unknown): void {
    if (this.stopped) return;
    const message = this.redact(error instanceof Error ? error.message : String(error));
    // Retries repeat the same error every few seconds; log each distinct one once.
    if (message !== this.loggedError) {
      this.deps.logger.warn(`queue "${this.providerName}": ${message}`);
      this.loggedError = message;
    }
    this.lastError = message;
    this.report('error');
  }

  redact(text: string): string {
    return redactSecrets(text, [...this.secrets, ...this.deps.providers.allSecrets()]);
  }

  /** Stops reporting and wakes every wait; the connection stays up for a last XACK. */
  stop(): void {
    this.abort.abort();
  }

  close(): void {
    this.stop();
    this.redis.disconnect();
  }

  private report(state: LinkState): void {
    if (this.stopped) return;
    this.state = state;
    this.deps.providers.setRunStatus(this.providerName, {
      status: state,
      ...(this.lastError && state === 'error' ? { last_error: this.lastError } : {}),
    });
  }
}
