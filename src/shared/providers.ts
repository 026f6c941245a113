import { z } from 'zod';
import { FamilySchema, TrustModeSchema } from './events.js';

/** Provider kinds (config.json `kind`), grouped by how their deliveries are authenticated. */
export const SIGNED_KINDS = ['github', 'stripe', 'slack', 'shopify', 'standard-webhooks', 'linear', 'paddle', 'discord', 'twilio'] as const;
export const TOKEN_KINDS = ['token', 'gitlab'] as const;
export const WEBHOOK_KINDS = [...SIGNED_KINDS, ...TOKEN_KINDS, 'open'] as const;
export const QUEUE_KINDS = ['redis-pubsub', 'redis-stream'] as const;
export const PROVIDER_KINDS = [...WEBHOOK_KINDS, ...QUEUE_KINDS] as const;

/** What anyone may see about a provider: never a secret, never a secret source's value. */
export const SECRET_STATUSES = ['configured', 'missing', 'none-by-design'] as const;
export const PROVIDER_RUN_STATUSES = ['listening', 'connected', 'connecting', 'error', 'disabled'] as const;

export const ProviderStatusSchema = z.object({
  name: z.string(),
  kind: z.string().describe('provider kind from config.json, e.g. github, stripe, redis-stream'),
  family: FamilySchema,
  trust_mode: TrustModeSchema,
  enabled: z.boolean(),
  secret_status: z.enum(SECRET_STATUSES),
  path: z.string().optional().describe('receive path for webhook providers, e.g. /webhooks/github'),
  channel: z.string().optional().describe('channels, patterns or stream for queue providers'),
  status: z.enum(PROVIDER_RUN_STATUSES),
  last_error: z.string().optional(),
});
export type ProviderStatus = z.infer<typeof ProviderStatusSchema>;
