import { describeSecretSource, type Config, type RedisPubSubConfig, type RedisStreamConfig } from '../config.js';
import { RedisPubSubAdapter } from './redis-pubsub.js';
import type { QueueDeps } from './redis-link.js';
import { RedisStreamAdapter } from './redis-stream.js';

/**
 * Runs one adapter per enabled queue provider of the current config. On 'config-changed' only
 * the providers whose config (or resolved URL) changed are restarted; a removed or disabled
 * provider is stopped. Changes are applied one at a time, and an adapter is fully stopped
 * before its replacement starts, so two consumers of one provider never overlap.
 */

type QueueProviderConfig = RedisPubSubConfig | RedisStreamConfig;

interface Running {
  key: string;
  adapter: RedisPubSubAdapter | RedisStreamAdapter;
}

export class QueueManager {
  private readonly running = new Map<string, Running>();
  private applying: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly onConfigChanged = () => void this.sync();

  constructor(
    private readonly deps: QueueDeps,
    private readonly config: () => Config,
  ) {}

  start(): void {
    this.deps.bus.on('config-changed', this.onConfigChanged);
    void this.sync();
  }

  /** Applies the current config; resolves once every change is in effect. */
  sync(): Promise<void> {
    this.applying = this.applying.then(() => this.apply()).catch((error: Error) => this.deps.logger.error(`queues: ${error.message}`));
    return this.applying;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.deps.bus.off('config-changed', this.onConfigChanged);
    await this.applying;
    await Promise.all([...this.running.values()].map(({ adapter }) => adapter.stop()));
    this.running.clear();
  }

  private async apply(): Promise<void> {
    if (this.stopped) return;
    const wanted = new Map<string, { provider: QueueProviderConfig; url: string | undefined; key: string }>();
    for (const provider of this.config().providers) {
      if ((provider.kind !== 'redis-pubsub' && provider.kind !== 'redis-stream') || !provider.enabled) continue;
      const url = this.deps.providers.resolveSecret(provider.url);
      wanted.set(provider.name, { provider, url, key: `${JSON.stringify(provider)}\n${url ?? ''}` });
    }
    const outdated = [...this.running].filter(([name, running]) => wanted.get(name)?.key !== running.key);
    await Promise.all(outdated.map(([, running]) => running.adapter.stop()));
    for (const [name] of outdated) this.running.delete(name);

    for (const [name, { provider, url, key }] of wanted) {
      if (this.running.has(name)) continue;
      if (url === undefined) {
        this.deps.providers.setRunStatus(name, {
          status: 'error',
          last_error: `the Redis URL is not set (${describeSecretSource(provider.url)} is empty or missing): ${this.deps.providers.missingSecretAdvice([provider.url], 'URL')}`,
        });
        continue;
      }
      const adapter =
        provider.kind === 'redis-stream' ? new RedisStreamAdapter(this.deps, provider, url) : new RedisPubSubAdapter(this.deps, provider, url);
      adapter.start();
      this.running.set(name, { key, adapter });
    }
  }
}
