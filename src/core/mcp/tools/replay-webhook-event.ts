import { z } from 'zod';
import { MAX_URL_CHARS } from '../../../shared/input.js';
import { SwitchboardError } from '../../errors.js';
import { takeOrThrow, type ActionLimiter } from '../../replay/rate-limit.js';
import type { McpDeps } from '../deps.js';
import type { ToolServer, ToolSpec } from '../tool.js';

export const ReplayWebhookEventInputSchema = z.strictObject({
  id: z.number().int().positive().describe('the event to replay'),
  target_url: z
    .url({ protocol: /^https?$/, error: 'target_url must be an http:// or https:// URL' })
    .max(MAX_URL_CHARS)
    .optional()
    .describe('where to POST it (an allowed host, by default loopback only); default: replay.default_target from config.json'),
});

export const ReplayWebhookEventOutputSchema = z.strictObject({
  id: z.number().int().positive().describe('the replay id (its row in the event’s replay history)'),
  target_url: z.string().describe('where it was sent'),
  delivered: z.boolean().describe('true when the target answered, whatever the status'),
  response_status: z.number().int().nullable().describe('the target’s HTTP status; a non-2xx is a result, not an error'),
  response_ms: z.number().int().nullable().describe('time to the response, in milliseconds'),
});

export const REPLAY_WEBHOOK_EVENT_TOOL: ToolSpec<typeof ReplayWebhookEventInputSchema, typeof ReplayWebhookEventOutputSchema> = {
  name: 'replay_webhook_event',
  title: 'Replay a webhook event',
  description:
    'Re-sends a stored event’s exact payload to a local consumer (target_url or the configured default), re-signed with a ' +
    'fresh signature when the provider is signed, and reports what the target answered. The only tool with a side effect; ' +
    'rate-limited per token (shared with send_test_event across sessions). A connection failure or timeout is the replay_failed error.',
  inputSchema: ReplayWebhookEventInputSchema,
  outputSchema: ReplayWebhookEventOutputSchema,
  annotations: { title: 'Replay a webhook event', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  example: {
    arguments: { id: 1043, target_url: 'http://localhost:3000/webhooks/github' },
    result: { id: 17, target_url: 'http://localhost:3000/webhooks/github', delivered: true, response_status: 500, response_ms: 23 },
  },
};

export function registerReplayWebhookEventTool(server: ToolServer, deps: McpDeps, limiter: ActionLimiter): void {
  server.registerTool(REPLAY_WEBHOOK_EVENT_TOOL, async ({ id, target_url }) => {
    const replay = await deps.replays.replay({
      eventId: id,
      ...(target_url === undefined ? {} : { targetUrl: target_url }),
      requestedBy: 'mcp',
      // Only replays that would be sent count against the limit.
      beforeSend: () => takeOrThrow(limiter, 'replays'),
    });
    if (!replay.delivered) {
      throw new SwitchboardError('replay_failed', `replay ${replay.id} of event ${id} to ${replay.target_url} failed: ${replay.error ?? 'no response'}`);
    }
    return {
      id: replay.id,
      target_url: replay.target_url,
      delivered: replay.delivered,
      response_status: replay.response_status,
      response_ms: replay.response_ms,
    };
  });
}
