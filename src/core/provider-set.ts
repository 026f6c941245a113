import {
  missingSecretAdvice,
  resolveSecretSource,
  resolveSecrets,
  type Config,
  type ProviderConfig,
  type SecretSource,
  type SecretStatus,
  type SecretVault,
  type WebhookProviderConfig,
} from './config.js';
import { verifierFor } from './providers/registry.js';
import type { Verifier } from './providers/verifier.js';
import type { ProviderStatus } from '../shared/providers.js';
import type { EventBus } from './bus.js';

/**
 * The providers of the current config with their secrets resolved. Rebuilt on every config
 * reload; the receiver looks a provider up per request, so a reload takes effect at once.
 * Secret values live only here and in the verifiers' arguments.
 */
export interface WebhookProvider {
  name: string;
  config: WebhookProviderConfig;
  verifier: Verifier;
  secrets: string[];
  secretStatus: SecretStatus;
  /** What to do when `secretStatus` is 'missing', naming the source (env variable, stored id). */
  secretAdvice: string | null;
  toleranceS: number;
}

type RunStatus = Pick<ProviderStatus, 'status' | 'last_error'>;

export class ProviderSet {
  private webhooks = new Map<string, WebhookProvider>();
  private configs: ProviderConfig[] = [];
  private secretValues: string[] = [];
  /** Live status of queue providers, reported by their adapters. */
  private readonly runStatus = new Map<string, RunStatus>();

  constructor(
    private readonly env: Readonly<Record<string, string | undefined>>,
    private readonly bus: EventBus,
    private readonly vault?: SecretVault,
  ) {}

  load(config: Config): void {
    const webhooks = new Map<string, WebhookProvider>();
    const secrets: string[] = [];
    for (const provider of config.providers) {
      if (provider.kind === 'redis-pubsub' || provider.kind === 'redis-stream') {
        const url = resolveSecretSource(provider.url, this.env, this.vault);
        if (url) secrets.push(url, ...passwordsIn(url));
        continue;
      }
      const verifier = verifierFor(provider.kind);
      if (!verifier) continue;
      const resolved = resolveSecrets(provider.secrets, this.env, this.vault);
      secrets.push(...resolved.values);
      const status = secretStatus(provider, resolved.values.length);
      webhooks.set(provider.name, {
        name: provider.name,
        config: provider,
        verifier,
        secrets: resolved.values,
        secretStatus: status,
        secretAdvice: status === 'missing' ? this.adviceFor(provider) : null,
        toleranceS: provider.tolerance_s ?? verifier.defaultToleranceS ?? 300,
      });
    }
    this.webhooks = webhooks;
    this.configs = config.providers;
    this.secretValues = secrets;
  }

  webhook(name: string): WebhookProvider | undefined {
    return this.webhooks.get(name);
  }

  config(name: string): ProviderConfig | undefined {
    return this.configs.find((provider) => provider.name === name);
  }

  /** Every resolved secret value, for redaction scans. Never leaves the core. */
  allSecrets(): readonly string[] {
    return this.secretValues;
  }

  resolveSecret(source: Parameters<typeof resolveSecretSource>[0]): string | undefined {
    return resolveSecretSource(source, this.env, this.vault);
  }

  /** What to do about secret sources that resolve to nothing (see `missingSecretAdvice`). */
  missingSecretAdvice(sources: readonly SecretSource[], what: 'secret' | 'URL' = 'secret'): string {
    return missingSecretAdvice(sources, { vault: this.vault !== undefined, what });
  }

  private adviceFor(provider: WebhookProviderConfig): string {
    if (provider.kind === 'discord') {
      return 'set public_key (64 hex characters, from the Discord developer portal) on this provider in config.json or on the Providers screen';
    }
    return this.missingSecretAdvice(provider.secrets);
  }

  setRunStatus(name: string, status: RunStatus): void {
    this.runStatus.set(name, status);
    const current = this.statuses().find((provider) => provider.name === name);
    if (current) this.bus.emit('provider-status', current);
  }

  statuses(): ProviderStatus[] {
    return this.configs.map((provider): ProviderStatus => {
      if (provider.kind === 'redis-pubsub' || provider.kind === 'redis-stream') {
        const run = this.runStatus.get(provider.name);
        const url = resolveSecretSource(provider.url, this.env, this.vault);
        return {
          name: provider.name,
          kind: provider.kind,
          family: 'queue',
          trust_mode: 'queue',
          enabled: provider.enabled,
          secret_status: url ? 'configured' : 'missing',
          channel:
            provider.kind === 'redis-stream'
              ? provider.stream
              : [...provider.channels, ...provider.patterns].join(', '),
          status: provider.enabled ? (run?.status ?? 'connecting') : 'disabled',
          ...(run?.last_error && provider.enabled ? { last_error: run.last_error } : {}),
        };
      }
      const webhook = this.webhooks.get(provider.name);
      const verifier = verifierFor(provider.kind);
      return {
        name: provider.name,
        kind: provider.kind,
        family: 'webhook',
        trust_mode: verifier?.trustMode ?? 'open',
        enabled: provider.enabled,
        secret_status: webhook?.secretStatus ?? 'missing',
        path: `/webhooks/${provider.name}`,
        status: !provider.enabled ? 'disabled' : verifier ? 'listening' : 'error',
        ...(!verifier
          ? { last_error: `provider kind "${provider.kind}" is not supported by this build` }
          : provider.enabled && webhook?.secretAdvice
            ? { last_error: `no usable secret, deliveries are refused (503): ${webhook.secretAdvice}` }
            : {}),
      };
    });
  }
}

function secretStatus(provider: WebhookProviderConfig, resolvedCount: number): SecretStatus {
  if (provider.kind === 'open') return 'none-by-design';
  if (provider.kind === 'discord') return provider.public_key ? 'configured' : 'missing';
  return resolvedCount > 0 ? 'configured' : 'missing';
}

/** A Redis URL's password is a secret on its own (it may show up in an error message). */
function passwordsIn(url: string): string[] {
  try {
    const password = decodeURIComponent(new URL(url).password);
    return password ? [password] : [];
  } catch {
    return [];
  }
}
