import { readFile, rename, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { AnswerRuleSchema, ChaosProfileSchema } from '../shared/delivery-lab.js';
import { QUEUE_KINDS, WEBHOOK_KINDS } from '../shared/providers.js';
import { SwitchboardError } from './errors.js';
import { writePrivateFile } from './private-files.js';

/**
 * config.json (DESIGN §3): validated once at start and passed down. Keys are snake_case because
 * people type them. Secrets are *sources* here; they are resolved into values by
 * `resolveProviders`, and only resolved values ever reach a verifier.
 */

export const PROVIDER_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export const SecretSourceSchema = z.union([
  z.strictObject({ env: z.string().min(1).describe('name of an environment variable') }),
  z.strictObject({ value: z.string().min(1).describe('the secret itself (env is safer)') }),
  z.strictObject({ stored: z.string().min(1).describe('id of a secret kept encrypted by the desktop app') }),
]);
export type SecretSource = z.infer<typeof SecretSourceSchema>;


export type WebhookKind = (typeof WEBHOOK_KINDS)[number];
export type QueueKind = (typeof QUEUE_KINDS)[number];
export type ProviderKind = WebhookKind | QueueKind;

const providerBase = {
  name: z.string().regex(PROVIDER_NAME_PATTERN, 'a lowercase name of letters, digits, "-" or "_" (it becomes /webhooks/<name>)'),
  enabled: z.boolean().default(true),
  forward_to: z.array(z.url({ protocol: /^https?$/ })).default([]),
  /** Forward rules with a chaos profile (DESIGN §15), beside the plain `forward_to` URLs. */
  forward: z.array(z.strictObject({ to: z.url({ protocol: /^https?$/ }), chaos: ChaosProfileSchema.optional() })).optional(),
};

export const WebhookProviderConfigSchema = z.strictObject({
  ...providerBase,
  kind: z.enum(WEBHOOK_KINDS),
  secrets: z.array(SecretSourceSchema).default([]),
  /** Accepted clock difference for timestamped schemes, both directions. */
  tolerance_s: z.number().int().positive().max(86_400).optional(),
  /** Discord signs with Ed25519: it publishes a public key instead of sharing a secret. */
  public_key: z.string().regex(/^[0-9a-fA-F]{64}$/, '64 hex characters').optional(),
  /** What the provider gets back (DESIGN §15): the first rule that matches a stored delivery decides. */
  answer: z.array(AnswerRuleSchema).max(100).optional(),
});

export const RedisPubSubConfigSchema = z.strictObject({
  ...providerBase,
  kind: z.literal('redis-pubsub'),
  url: SecretSourceSchema,
  channels: z.array(z.string().min(1)).default([]),
  patterns: z.array(z.string().min(1)).default([]),
  type_field: z.string().min(1).default('type'),
});

export const RedisStreamConfigSchema = z.strictObject({
  ...providerBase,
  kind: z.literal('redis-stream'),
  url: SecretSourceSchema,
  stream: z.string().min(1),
  group: z.string().min(1).default('switchboard'),
  consumer: z.string().min(1).optional(),
  type_field: z.string().min(1).default('type'),
  /** Entries delivered this many times without being stored become rejections. */
  max_deliveries: z.number().int().positive().default(5),
  claim_idle_ms: z.number().int().positive().default(60_000),
});

export const ProviderConfigSchema = z.discriminatedUnion('kind', [
  WebhookProviderConfigSchema,
  RedisPubSubConfigSchema,
  RedisStreamConfigSchema,
]);
export type ProviderConfig = z.infer<typeof ProviderConfigSchema>;
export type WebhookProviderConfig = z.infer<typeof WebhookProviderConfigSchema>;
export type RedisPubSubConfig = z.infer<typeof RedisPubSubConfigSchema>;
export type RedisStreamConfig = z.infer<typeof RedisStreamConfigSchema>;

const port = z.number().int().min(0).max(65_535);

export const DEFAULT_RECEIVER_PORT = 7777;
export const DEFAULT_CONTROL_PORT = 7778;
export const DEFAULT_MAX_BODY_BYTES = 25 * 1024 * 1024;

export const ConfigSchema = z
  .strictObject({
    receiver: z
      .strictObject({
        host: z.string().min(1).default('127.0.0.1'),
        port: port.default(DEFAULT_RECEIVER_PORT),
        max_body_bytes: z.number().int().positive().default(DEFAULT_MAX_BODY_BYTES),
        public_url: z.url({ protocol: /^https?$/ }).optional(),
      })
      .prefault({}),
    control: z
      .strictObject({
        host: z
          .enum(['127.0.0.1', 'localhost', '::1'], { message: 'a loopback address (the control port must never be exposed)' })
          .default('127.0.0.1'),
        port: port.default(DEFAULT_CONTROL_PORT),
      })
      .prefault({}),
    providers: z.array(ProviderConfigSchema).default([]),
    replay: z
      .strictObject({
        default_target: z.url({ protocol: /^https?$/ }).nullable().optional(),
        allow_hosts: z.array(z.string().min(1)).default(['localhost', '127.0.0.1', '::1']),
        timeout_ms: z.number().int().positive().max(600_000).default(10_000),
        resign: z.boolean().default(true),
      })
      .prefault({}),
    retention: z
      .strictObject({
        max_age_days: z.number().positive().default(30),
        max_rows: z.number().int().positive().default(500_000),
        max_rejections: z.number().int().positive().default(50_000),
      })
      .prefault({}),
    database: z
      .strictObject({ url: z.string().min(1).nullable().default(null) })
      .prefault({}),
  })
  .superRefine((config, ctx) => {
    const seen = new Map<string, number>();
    config.providers.forEach((provider, index) => {
      const first = seen.get(provider.name);
      if (first !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['providers', index, 'name'],
          message: `duplicate provider name "${provider.name}" (already used by providers[${first}])`,
        });
      } else {
        seen.set(provider.name, index);
      }
    });
  });

export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;

/** Settings read only at start (ports, listen addresses, database); as JSON paths. */
export function restartRequiredChanges(before: Config, after: Config): string[] {
  const paths: string[] = [];
  if (after.receiver.host !== before.receiver.host) paths.push('receiver.host');
  if (after.receiver.port !== before.receiver.port) paths.push('receiver.port');
  if (after.control.host !== before.control.host) paths.push('control.host');
  if (after.control.port !== before.control.port) paths.push('control.port');
  if (after.database.url !== before.database.url) paths.push('database.url');
  return paths;
}

/** `providers[0].secrets[1].env` from a zod path. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(top level)' : out;
}

export function formatZodError(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${formatPath(issue.path)}: ${issue.message}`)
    .join('; ');
}

export function parseConfig(input: unknown, source = 'config'): Config {
  const result = ConfigSchema.safeParse(input);
  if (!result.success) {
    throw new SwitchboardError('config_invalid', `${source}: ${formatZodError(result.error)}`, {
      hint: 'fix the file and start again (see docs/configuration.md)',
    });
  }
  return result.data;
}

/** An empty file is not "JSON with a comment": say what the smallest valid one is. */
export const EMPTY_CONFIG_HINT = 'write {} in it (or { "providers": [] }), or delete it to start with no providers';

/** The file's JSON as written (no defaults applied), or `undefined` when there is no file. */
export async function readConfigJson(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SwitchboardError('config_invalid', `${path}: cannot be read (${(error as Error).message})`, { cause: error });
  }
  if (text.trim() === '') throw new SwitchboardError('config_invalid', `${path}: the file is empty`, { hint: EMPTY_CONFIG_HINT });
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new SwitchboardError('config_invalid', `${path}: not valid JSON (${(error as Error).message})`, {
      hint: 'config.json is plain JSON: no comments or trailing commas',
      cause: error,
    });
  }
}

/** Reads and validates a config file; a missing file is an empty (valid) config. */
export async function loadConfigFile(path: string): Promise<{ config: Config; existed: boolean }> {
  const json = await readConfigJson(path);
  return { config: parseConfig(json ?? {}, path), existed: json !== undefined };
}

/**
 * Atomic write: a reader (or a crash) sees the old file or the new one, never half of each.
 * The temp file sits beside the target so rename() stays on one filesystem.
 */
export async function writeConfigFile(path: string, config: ConfigInput): Promise<Config> {
  const parsed = parseConfig(config, path);
  await mkdir(dirname(path), { recursive: true });
  const temp = join(dirname(path), `.config.${process.pid}.${Date.now()}.tmp`);
  // Never through a symbolic link planted at the temp name (issue #22.4); rename replaces a link at `path`, it does not follow it.
  await writePrivateFile(temp, `${JSON.stringify(config, null, 2)}\n`);
  await rename(temp, path);
  return parsed;
}

/** Reads secrets kept by the desktop app (`{ "stored": id }`); headless has none. */
export interface SecretVault {
  get(id: string): string | undefined;
  /** Keeps a secret typed into the UI and returns its id (the desktop app's safeStorage vault). */
  put?(value: string): string;
}

export type SecretStatus = 'configured' | 'missing' | 'none-by-design';

export interface SecretResolution {
  values: string[];
  /** Sources that could not be resolved, described without their value. */
  missing: string[];
}

export function describeSecretSource(source: SecretSource): string {
  if ('env' in source) return `env ${source.env}`;
  if ('stored' in source) return `stored secret ${source.stored}`;
  return 'inline value';
}

export function resolveSecretSource(
  source: SecretSource,
  env: Readonly<Record<string, string | undefined>>,
  vault?: SecretVault,
): string | undefined {
  if ('value' in source) return source.value;
  if ('env' in source) {
    const value = env[source.env];
    return value === undefined || value === '' ? undefined : value;
  }
  return vault?.get(source.stored);
}

export function resolveSecrets(
  sources: readonly SecretSource[],
  env: Readonly<Record<string, string | undefined>>,
  vault?: SecretVault,
): SecretResolution {
  const values: string[] = [];
  const missing: string[] = [];
  for (const source of sources) {
    const value = resolveSecretSource(source, env, vault);
    if (value === undefined) missing.push(describeSecretSource(source));
    else values.push(value);
  }
  return { values, missing };
}

/**
 * What to do about a secret whose sources all resolved to nothing, naming each source (never a
 * value). Environment variables are read from the environment switchboard was started with: a
 * running process never sees a variable exported later (in another shell or not), so the advice
 * for them is always "set it and restart", with the ways that need no restart beside it.
 */
export function missingSecretAdvice(sources: readonly SecretSource[], options: { vault: boolean; what?: 'secret' | 'URL' }): string {
  const what = options.what ?? 'secret';
  const envNames = sources.flatMap((source) => ('env' in source ? [source.env] : []));
  const stored = sources.flatMap((source) => ('stored' in source ? [source.stored] : []));
  const advice: string[] = [];
  if (envNames.length > 0) {
    advice.push(
      `set ${envNames.join(' or ')} in the environment switchboard starts with and restart it, or store the ${what} in config.json / the UI`,
    );
  }
  if (stored.length > 0) {
    advice.push(
      options.vault
        ? `the ${what} stored as ${stored.join(', ')} is no longer in this machine's keychain: enter it again on the Providers screen`
        : `the ${what} stored as ${stored.join(', ')} is kept by the desktop app, which switchboard serve cannot read: use { "env": "NAME" } or a value in config.json`,
    );
  }
  if (advice.length === 0) advice.push(`add a ${what} to this provider in config.json or on the Providers screen`);
  return advice.join('; or ');
}

/** Warnings worth printing at start; they name sources, never values. */
export function configWarnings(config: Config): string[] {
  const warnings: string[] = [];
  for (const provider of config.providers) {
    const sources = 'secrets' in provider ? provider.secrets : [provider.url];
    if (sources.some((source) => 'value' in source)) {
      warnings.push(
        `provider "${provider.name}": a secret is written inline in config.json; { "env": "NAME" } keeps it out of the file`,
      );
    }
  }
  return warnings;
}
