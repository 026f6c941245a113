import type { RedisPubSubConfig } from '../config.js';
import { pubSubEvent, safeHeaders } from './queue-event.js';
import { RedisLink, redisUrlProblem, type QueueDeps, type RedisLinkOptions } from './redis-link.js';

/**
 * `redis-pubsub` provider: SUBSCRIBE to `channels`, PSUBSCRIBE to `patterns`, store every
 * message as an event. Pub/sub is at-most-once by nature: Redis keeps no copy, so a message
 * published while we are disconnected, or one whose insert fails, is gone. Use a stream
 * provider when every message matters.
 */
export class RedisPubSubAdapter {
  private link: RedisLink | undefined;
  private whoami: string | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly deps: QueueDeps,
    private readonly config: RedisPubSubConfig,
    private readonly url: string,
    private readonly options: RedisLinkOptions = {},
  ) {}

  start(): void {
    const { deps, config } = this;
    const problem = redisUrlProblem(this.url);
    if (problem) {
      deps.providers.setRunStatus(config.name, { status: 'error', last_error: problem });
      return;
    }
    if (config.channels.length === 0 && config.patterns.length === 0) {
      deps.providers.setRunStatus(config.name, { status: 'error', last_error: 'nothing to subscribe to: add channels or patterns' });
      return;
    }
    const link = new RedisLink(deps, config.name, this.url, this.options);
    this.link = link;
    link.redis.on('messageBuffer', (channel: Buffer, message: Buffer) => this.receive(message, channel, null));
    link.redis.on('pmessageBuffer', (pattern: Buffer, channel: Buffer, message: Buffer) => this.receive(message, channel, pattern));
    // Every (re)connect is a fresh connection: subscribe again, then say we are connected, so
    // `connected` means "messages published from now on arrive".
    link.redis.on('ready', () => void this.subscribe(link));
    link.connect();
  }

  private async subscribe(link: RedisLink): Promise<void> {
    try {
      // Before SUBSCRIBE: a RESP2 connection in subscriber mode accepts no other command.
      this.whoami = await link.whoami();
      if (this.config.channels.length > 0) await link.redis.subscribe(...this.config.channels);
      if (this.config.patterns.length > 0) await link.redis.psubscribe(...this.config.patterns);
      link.connected();
    } catch (error) {
      link.failed(error);
    }
  }

  private receive(message: Buffer, channel: Buffer, pattern: Buffer | null): void {
    const stored = this.store(message, channel.toString('utf8'), pattern?.toString('utf8') ?? null).finally(() => this.inFlight.delete(stored));
    this.inFlight.add(stored);
  }

  private async store(message: Buffer, channel: string, pattern: string | null): Promise<void> {
    const { deps, config } = this;
    const event = pubSubEvent(
      {
        provider: config.name,
        verify_detail: `redis acl: ${this.whoami ?? 'unknown'}`,
        headers: safeHeaders({ 'x-redis-channel': channel, ...(pattern !== null ? { 'x-redis-pattern': pattern } : {}) }),
      },
      message,
      config.type_field,
    );
    const test = deps.testMarks?.claimMessage(config.name, event.payload) ?? null;
    try {
      const result = await deps.store.insertEvent(test ? { ...event, origin: 'test' } : event);
      if (!result.duplicate) void result.visible.then((visible) => visible && deps.bus.emit('event', result.event));
      test?.stored(result.event);
    } catch (error) {
      // At-most-once: there is no one to ask for the message again.
      const message = this.link?.redact((error as Error).message) ?? 'storage failed';
      deps.logger.error(`queue "${config.name}": a message on ${channel} was lost: ${message}`);
    }
  }

  /** Unsubscribes (by disconnecting), then waits for the messages already received to be stored. */
  async stop(): Promise<void> {
    this.link?.close();
    await Promise.allSettled([...this.inFlight]);
  }
}
