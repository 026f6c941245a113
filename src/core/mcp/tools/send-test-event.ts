import { z } from 'zod';
import { EventSummarySchema } from '../../../shared/events.js';
import type { McpDeps } from '../deps.js';
import type { ToolServer, ToolSpec } from '../tool.js';
import { takeOrThrow, type ActionLimiter } from '../../rate-limit.js';

export const SendTestEventInputSchema = z.strictObject({
  provider: z.string().min(1).describe('a configured provider name (see list_providers)'),
  event_type: z.string().min(1).optional().describe('a test event type of the provider’s kind, e.g. "push"; default: the kind’s first'),
  overrides: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('dot path → JSON value set in the fixture before signing, e.g. {"data.object.amount_total": 999}'),
  payload: z.string().optional().describe('a whole body to send instead of the fixture (signed as is); not with overrides'),
});

export const SendTestEventOutputSchema = z.strictObject({
  event: EventSummarySchema.describe('the stored event (origin "test")'),
});

export const SEND_TEST_EVENT_TOOL: ToolSpec<typeof SendTestEventInputSchema, typeof SendTestEventOutputSchema> = {
  name: 'send_test_event',
  title: 'Send a test event',
  description:
    'Make an event to exercise a handler without the real provider: a realistic fixture (fresh ids), signed by the ' +
    'provider’s scheme and delivered through the receiver like a real one (origin "test"; forward rules apply). ' +
    'Rate-limited with replays; an unknown provider or type names what exists.',
  inputSchema: SendTestEventInputSchema,
  outputSchema: SendTestEventOutputSchema,
  annotations: { title: 'Send a test event', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  example: {
    arguments: { provider: 'stripe', event_type: 'checkout.session.completed', overrides: { 'data.object.amount_total': 999 } },
    result: {
      event: {
        id: 1044,
        provider: 'stripe',
        family: 'webhook',
        event_type: 'checkout.session.completed',
        external_id: 'evt_1QhX2bL0iP4x9aR7cN3mK5tY',
        origin: 'test',
        trust_mode: 'signed',
        verified: true,
        payload_size: 1893,
        received_at: '2026-06-01T09:41:07.123456Z',
        attempts: 1,
        drift: false,
      },
    },
  },
};

/** Shares the token's replay limiter: both have side effects on what a consumer receives. */
export function registerSendTestEventTool(server: ToolServer, deps: McpDeps, limiter: ActionLimiter): void {
  server.registerTool(SEND_TEST_EVENT_TOOL, async ({ provider, event_type, overrides, payload }) => {
    const event = await deps.testEvents.send({
      provider,
      // Only test events that would be sent count against the token's limit.
      beforeSend: () => takeOrThrow(limiter, 'test events'),
      ...(event_type !== undefined ? { eventType: event_type } : {}),
      ...(overrides !== undefined ? { overrides } : {}),
      ...(payload !== undefined ? { payload } : {}),
    });
    return { event };
  });
}
