import { z } from 'zod';
import { EventDetailSchema } from '../../../shared/events.js';
import { toEventDetail } from '../../api/wire.js';
import { SwitchboardError } from '../../errors.js';
import type { McpDeps } from '../deps.js';
import type { ToolServer, ToolSpec } from '../tool.js';

export const GetWebhookEventInputSchema = z.strictObject({
  id: z.number().int().positive().describe('the event id (from list_webhook_events or wait_for_webhook_event)'),
});

export const GET_WEBHOOK_EVENT_TOOL: ToolSpec<typeof GetWebhookEventInputSchema, typeof EventDetailSchema> = {
  name: 'get_webhook_event',
  title: 'Get a webhook event',
  description:
    'Returns one stored event in full: sanitized headers (secret-bearing values are «redacted») and the raw payload, ' +
    'as text when it is valid UTF-8 (payload_encoding "utf8"), else base64.',
  inputSchema: GetWebhookEventInputSchema,
  outputSchema: EventDetailSchema,
  annotations: { title: 'Get a webhook event', readOnlyHint: true, openWorldHint: false },
  example: {
    arguments: { id: 1042 },
    result: {
      id: 1042,
      provider: 'stripe',
      family: 'webhook',
      event_type: 'checkout.session.completed',
      external_id: 'evt_1QxYz2AbCdEf',
      origin: 'provider',
      trust_mode: 'signed',
      verified: true,
      payload_size: 72,
      received_at: '2026-11-30T09:41:07.123456Z',
      verify_detail: 'stripe v1 signature matched secret #1, timestamp skew 1 s',
      content_type: 'application/json; charset=utf-8',
      source_ip: '203.0.113.7',
      headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': '«redacted»', 'user-agent': 'Stripe/1.0' },
      payload: '{"id":"evt_1QxYz2AbCdEf","type":"checkout.session.completed","data":{}}',
      payload_encoding: 'utf8',
    },
  },
};

export function registerGetWebhookEventTool(server: ToolServer, deps: McpDeps): void {
  server.registerTool(GET_WEBHOOK_EVENT_TOOL, async ({ id }) => {
    const record = await deps.store.getEvent(id);
    if (!record) throw new SwitchboardError('not_found', `no event with id ${id} (it may have been removed by retention)`);
    return toEventDetail(record);
  });
}
