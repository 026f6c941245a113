import type { Redis } from 'ioredis';
import type { TestEventInfo } from '../../shared/api.js';
import { ANSWER_RULE_HEADER } from '../../shared/delivery-lab.js';
import type { EventSummary } from '../../shared/events.js';
import { describeSecretSource, type Config, type ProviderConfig, type RedisPubSubConfig, type RedisStreamConfig } from '../config.js';
import { SwitchboardError } from '../errors.js';
import type { ProviderSet, WebhookProvider } from '../provider-set.js';
import { redactSecrets, redisUrlProblem, secretsOfUrl, withOneShotRedis } from '../queue/redis-link.js';
import { fixturesFor } from './catalog.js';
import { checkOverrideValue, setPath } from '../dot-path.js';
import { fixtureContext, type FixturePayload, type TestFixture } from './fixture.js';
import { TEST_MARK_HEADER, type PendingTest, type TestMarks } from '../test-marks.js';

/**
 * Test events (DESIGN §11): build a fixture with fresh ids, sign it with the provider's first
 * configured secret by its kind's own scheme (the verifier's `sign`, the one replays use), and
 * deliver it the way the provider would — an HTTP POST to our own receiver, or a PUBLISH / XADD
 * on the provider's Redis — so it runs the real path: verify, store, live, forward rules.
 * What is stored is marked origin "test" (marks.ts says how that cannot be forged).
 */

export interface SendTestEventRequest {
  provider: string;
  eventType?: string;
  /** Dot path → value, applied to the fixture's JSON (or form fields) before signing. */
  overrides?: Record<string, unknown>;
  /** A whole body instead of the fixture's (sent as is, signed). */
  payload?: string;
  /**
   * Runs once the test event is known to be sendable, right before it is sent; throwing stops
   * it. The MCP rate limit uses it, so a call refused as invalid_argument costs nothing.
   */
  beforeSend?: () => void;
}

export interface TestEventSenderDeps {
  providers: ProviderSet;
  config: () => Config;
  marks: TestMarks;
  /** The receiver's local origin, e.g. http://127.0.0.1:7777. */
  receiverUrl: () => string;
  now: () => number;
}

/** How long a sent test event may take to be stored (a queue consumer may be mid-reconnect). */
export const TEST_EVENT_TIMEOUT_MS = 10_000;

export class TestEventSender {
  constructor(readonly deps: TestEventSenderDeps) {}

  /** The catalog for every configured provider, or for one. */
  list(providerName?: string): TestEventInfo[] {
    const providers = providerName === undefined ? this.deps.config().providers : [this.provider(providerName)];
    return providers.flatMap((provider) =>
      fixturesFor(provider.kind).map((fixture) => ({ provider: provider.name, kind: provider.kind, event_type: fixture.eventType, description: fixture.description })),
    );
  }

  async send(request: SendTestEventRequest): Promise<EventSummary> {
    const config = this.provider(request.provider);
    if (!config.enabled) {
      throw new SwitchboardError('invalid_argument', `provider "${config.name}" is disabled`, { hint: 'enable it on the Providers screen (or "enabled": true in config.json) first' });
    }
    const fixture = this.fixture(config, request.eventType);
    const nowMs = this.deps.now();
    const built = fixture.build(fixtureContext(config.name, nowMs));
    if (config.kind === 'redis-pubsub' || config.kind === 'redis-stream') {
      return this.sendToQueue(config, fixture, built, request);
    }
    const provider = this.deps.providers.webhook(config.name);
    if (!provider) throw new SwitchboardError('internal', `provider "${config.name}" is not loaded`);
    return this.sendToReceiver(provider, built, request, nowMs);
  }

  private provider(name: string): ProviderConfig {
    const providers = this.deps.config().providers;
    const provider = providers.find((candidate) => candidate.name === name);
    if (provider) return provider;
    const names = providers.map((candidate) => candidate.name);
    throw new SwitchboardError(
      'invalid_argument',
      names.length > 0 ? `there is no provider named "${name}"; configured: ${names.join(', ')}` : `there is no provider named "${name}": none is configured yet`,
      names.length > 0 ? {} : { hint: 'add one on the Providers screen or in config.json, e.g. { "name": "github", "kind": "github", "secrets": [{ "env": "GITHUB_WEBHOOK_SECRET" }] }' },
    );
  }

  private fixture(provider: ProviderConfig, eventType: string | undefined): TestFixture {
    const fixtures = fixturesFor(provider.kind);
    if (eventType === undefined) return fixtures[0]!;
    const fixture = fixtures.find((candidate) => candidate.eventType === eventType);
    if (fixture) return fixture;
    throw new SwitchboardError(
      'invalid_argument',
      `provider "${provider.name}" (${provider.kind}) has no test event "${eventType}"; choose one of: ${fixtures.map((candidate) => candidate.eventType).join(', ')}`,
    );
  }

  private async sendToReceiver(provider: WebhookProvider, built: FixturePayload, request: SendTestEventRequest, nowMs: number): Promise<EventSummary> {
    const { name, verifier, config } = provider;
    const secret = provider.secrets[0];
    if (verifier.trustMode !== 'open' && provider.secretStatus !== 'configured') {
      const sources = config.kind === 'discord' ? 'public_key' : config.secrets.map(describeSecretSource).join(', ') || 'no secrets';
      throw new SwitchboardError('invalid_argument', `provider "${name}" has no usable secret to sign a test event with (configured: ${sources})`, {
        hint: config.kind === 'discord' ? 'set public_key on the provider' : 'set the environment variable (then restart) or enter the secret on the Providers screen',
      });
    }
    const path = `/webhooks/${encodeURIComponent(name)}`;
    const publicBase = this.deps.config().receiver.public_url;
    if (config.kind === 'twilio' && !publicBase) {
      throw new SwitchboardError('invalid_argument', `provider "${name}" is a Twilio provider: Twilio signs the public URL it calls, so test events need receiver.public_url`, {
        hint: 'set receiver.public_url in Settings (or config.json) to your tunnel URL, e.g. https://abc.ngrok.app',
      });
    }
    const { body, contentType } = serialize(built, request);
    const headers: Record<string, string> = { ...built.headers, 'content-type': contentType };
    request.beforeSend?.();

    if (config.kind === 'discord') {
      Object.assign(headers, this.deps.marks.signDiscord(body, nowMs));
    } else if (verifier.sign && secret !== undefined) {
      Object.assign(headers, verifier.sign({ body, secret, nowMs, headers, publicUrl: publicBase ? new URL(path, publicBase).toString() : null }));
    } else if (verifier.trustMode === 'token' && secret !== undefined) {
      headers.authorization = `Bearer ${secret}`;
    }

    const pending = this.deps.marks.expectDelivery(name, body);
    headers[TEST_MARK_HEADER] = pending.header;
    try {
      let response: Response;
      try {
        response = await fetch(`${this.deps.receiverUrl()}${path}`, { method: 'POST', headers, body, signal: AbortSignal.timeout(TEST_EVENT_TIMEOUT_MS) });
      } catch (error) {
        throw new SwitchboardError('internal', `the test event could not reach the receiver: ${(error as Error).message}`);
      }
      const text = await response.text();
      // A status an answer rule chose (DESIGN §15) is not a failure: the event was stored.
      if (response.status >= 300 && !response.headers.has(ANSWER_RULE_HEADER)) {
        const answer = parseAnswer(text);
        const what = `the receiver answered ${response.status} ${answer.error ?? ''}`.trim();
        throw new SwitchboardError(response.status === 413 ? 'invalid_argument' : 'internal', `${what}${answer.hint ? `: ${answer.hint}` : ''}`);
      }
      return await within(pending, TEST_EVENT_TIMEOUT_MS, `the receiver accepted the test event for "${name}" but did not store it`);
    } finally {
      pending.cancel();
    }
  }

  private async sendToQueue(
    config: RedisPubSubConfig | RedisStreamConfig,
    fixture: TestFixture,
    built: FixturePayload,
    request: SendTestEventRequest,
  ): Promise<EventSummary> {
    const status = this.deps.providers.statuses().find((candidate) => candidate.name === config.name);
    if (status?.status !== 'connected') {
      // Pub/sub keeps nothing for a subscriber that is not there; a stream would, but the caller waits for the event.
      throw new SwitchboardError('invalid_argument', `provider "${config.name}" is not connected to Redis (${status?.status ?? 'unknown'}${status?.last_error ? `: ${status.last_error}` : ''}), so a test message would not be received`);
    }
    const url = this.deps.providers.resolveSecret(config.url);
    if (url === undefined) throw new SwitchboardError('invalid_argument', `provider "${config.name}" has no Redis URL (${describeSecretSource(config.url)} is not set)`);
    const problem = redisUrlProblem(url);
    if (problem) throw new SwitchboardError('invalid_argument', problem);

    const typed = built.json && config.type_field !== 'type' ? { ...built, json: { ...built.json, [config.type_field]: fixture.eventType } } : built;
    const { body } = serialize(typed, request);
    let target: string;
    let publish: (redis: Redis) => Promise<unknown>;
    if (config.kind === 'redis-pubsub') {
      const channel = config.channels[0];
      if (channel === undefined) {
        throw new SwitchboardError('invalid_argument', `provider "${config.name}" subscribes to patterns only (${config.patterns.join(', ')}); add a channel to publish test messages to`);
      }
      target = `channel ${channel}`;
      publish = (redis) => redis.publish(channel, body);
    } else {
      target = `stream ${config.stream}`;
      publish = (redis) => redis.xadd(config.stream, '*', config.type_field, fixture.eventType, 'payload', body);
    }
    request.beforeSend?.();

    const pending = this.deps.marks.expectMessage(config.name, body);
    try {
      try {
        await withOneShotRedis(url, 'switchboard:test-event', publish);
      } catch (error) {
        const message = redactSecrets((error as Error).message, [...secretsOfUrl(url), ...this.deps.providers.allSecrets()]);
        throw new SwitchboardError('internal', `could not publish the test message to ${target}: ${message}`);
      }
      return await within(pending, TEST_EVENT_TIMEOUT_MS, `published a test message to ${target}, but provider "${config.name}" did not store it`);
    } finally {
      pending.cancel();
    }
  }
}

/** The body to send: the fixture with overrides applied, or the caller's whole payload. */
function serialize(built: FixturePayload, request: Pick<SendTestEventRequest, 'overrides' | 'payload'>): { body: Buffer; contentType: string } {
  const contentType = built.form ? 'application/x-www-form-urlencoded' : 'application/json';
  if (request.payload !== undefined) {
    if (request.overrides && Object.keys(request.overrides).length > 0) {
      throw new SwitchboardError('invalid_argument', 'pass either a whole payload or overrides, not both');
    }
    return { body: Buffer.from(request.payload, 'utf8'), contentType };
  }
  if (built.form) {
    const form = { ...built.form };
    for (const [path, value] of Object.entries(request.overrides ?? {})) {
      if (path === '') throw new SwitchboardError('invalid_argument', 'an override needs a field name');
      checkOverrideValue(path, value);
      form[path] = typeof value === 'string' ? value : JSON.stringify(value);
    }
    return { body: Buffer.from(new URLSearchParams(form).toString()), contentType };
  }
  const json = structuredClone(built.json);
  for (const [path, value] of Object.entries(request.overrides ?? {})) setPath(json, path, value);
  return { body: Buffer.from(JSON.stringify(json)), contentType };
}

function parseAnswer(text: string): { error?: string; hint?: string } {
  try {
    const value = JSON.parse(text) as { error?: unknown; hint?: unknown };
    return { ...(typeof value.error === 'string' ? { error: value.error } : {}), ...(typeof value.hint === 'string' ? { hint: value.hint } : {}) };
  } catch {
    return {};
  }
}

async function within(pending: PendingTest, timeoutMs: number, failure: string): Promise<EventSummary> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      pending.stored,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new SwitchboardError('internal', `${failure} within ${timeoutMs / 1000} s`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
