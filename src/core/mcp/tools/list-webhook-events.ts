import { z } from 'zod';
import { EventListItemSchema } from '../../../shared/api.js';
import { OriginSchema, TrustModeSchema } from '../../../shared/events.js';
import { CursorInputSchema, inputText, IsoDateSchema, IsoDateTimeSchema, MAX_NAME_CHARS, MAX_SEARCH_CHARS } from '../../../shared/input.js';
import type { McpDeps } from '../deps.js';
import { fitPage } from '../page-budget.js';
import { checkProviderFilter } from '../provider-filter.js';
import type { ToolServer, ToolSpec } from '../tool.js';

export const MAX_LIST_LIMIT = 200;
export const DEFAULT_LIST_LIMIT = 50;

// At most 15 digits: larger ids are not safe integers (and do not exist).
const EVENT_ID_TEXT = /^[1-9][0-9]{0,14}$/;

export const ListWebhookEventsInputSchema = z.strictObject({
  provider: inputText(MAX_NAME_CHARS).optional().describe('a provider name from config.json, e.g. "github"'),
  event_type: inputText().optional().describe('only this type, e.g. "push" or "checkout.session.completed"'),
  event_type_prefix: inputText(MAX_NAME_CHARS).optional().describe('only types starting with this, e.g. "pull_request" or "invoice."'),
  trust_mode: TrustModeSchema.optional().describe('signed, token, open or queue'),
  origin: OriginSchema.optional().describe('provider (real deliveries), test (made by switchboard) or import'),
  external_id: inputText(MAX_NAME_CHARS).optional().describe('the provider’s delivery id, e.g. "evt_1QxYz2AbCdEf"'),
  search: inputText(MAX_SEARCH_CHARS)
    .optional()
    .describe('case-insensitive text in the payload (first 64 KiB) or type; 3+ letters or digits in a row'),
  since: z
    .union([z.number().int().positive(), z.string().regex(EVENT_ID_TEXT), IsoDateTimeSchema, IsoDateSchema], {
      error: 'must be an ISO-8601 time (e.g. 2026-11-30T09:00:00Z) or an event id',
    })
    .optional()
    .describe('an ISO-8601 time (received at or after it) or an event id (after it)'),
  drift: z.boolean().optional().describe("true: only events that differ from their type's usual shape"),
  limit: z.number().int().min(1).max(MAX_LIST_LIMIT).default(DEFAULT_LIST_LIMIT).describe(`page size, 1–${MAX_LIST_LIMIT}`),
  cursor: CursorInputSchema.optional().describe('next_cursor of the previous page, unchanged'),
});

export const ListWebhookEventsOutputSchema = z.strictObject({
  events: z.array(EventListItemSchema).describe('newest first (received_at, then id, descending); fewer than limit when the page reached its size budget'),
  next_cursor: z.string().optional().describe('present only when more events may match; pass it as cursor for the next page'),
  searched_back_to: z
    .string()
    .optional()
    .describe(
      'only on a search that ran out of its time budget (~100 ms) before filling the page: every event received after this time was searched, ' +
        'older ones not yet — pass next_cursor to search on from here (events may be empty)',
    ),
  index_progress: z
    .strictObject({ indexed: z.number().int(), total: z.number().int() })
    .optional()
    .describe('beside searched_back_to while the search index is still being built: older events are searched slowly until it is done — an empty page is not "no match"'),
});

export const LIST_WEBHOOK_EVENTS_TOOL: ToolSpec<typeof ListWebhookEventsInputSchema, typeof ListWebhookEventsOutputSchema> = {
  name: 'list_webhook_events',
  title: 'List webhook events',
  description:
    'Find stored webhook and queue events, newest first, as summaries (get_webhook_event reads one). Filter by ' +
    'provider, type, trust, origin, delivery id, payload text or time; page with next_cursor. ' +
    'verified: true only when switchboard checked the signature (never for imports).',
  inputSchema: ListWebhookEventsInputSchema,
  outputSchema: ListWebhookEventsOutputSchema,
  annotations: { title: 'List webhook events', readOnlyHint: true, openWorldHint: false },
  example: {
    arguments: { provider: 'stripe', event_type: 'checkout.session.completed', search: 'cus_Q8', since: '2026-11-30T09:00:00Z', limit: 2 },
    result: {
      events: [
        {
          id: 1042,
          provider: 'stripe',
          family: 'webhook',
          event_type: 'checkout.session.completed',
          external_id: 'evt_1QxYz2AbCdEf',
          origin: 'provider',
          trust_mode: 'signed',
          verified: true,
          payload_size: 2314,
          received_at: '2026-11-30T09:41:07.123456Z',
          attempts: 1,
          drift: false,
          last_replay: { delivered: true, response_status: 400, requested_by: 'mcp', created_at: '2026-11-30T09:42:10.402113Z' },
        },
        {
          id: 1038,
          provider: 'stripe',
          family: 'webhook',
          event_type: 'checkout.session.completed',
          external_id: 'evt_1QxYy9XwVuTs',
          origin: 'provider',
          trust_mode: 'signed',
          verified: true,
          payload_size: 2290,
          received_at: '2026-11-30T09:12:55.004211Z',
          attempts: 1,
          drift: false,
          last_replay: null,
        },
      ],
      next_cursor: 'WyIyMDI2LTExLTMwVDA5OjEyOjU1LjAwNDIxMVoiLDEwMzhd',
    },
  },
};

export function registerListWebhookEventsTool(server: ToolServer, deps: McpDeps): void {
  server.registerTool(LIST_WEBHOOK_EVENTS_TOOL, async ({ provider, event_type, event_type_prefix, trust_mode, origin, external_id, search, since, drift, limit, cursor }) => {
    await checkProviderFilter(deps, provider);
    const byId = typeof since === 'number' || (since !== undefined && EVENT_ID_TEXT.test(since));
    const stored = await deps.store.listEvents({
      provider,
      event_type,
      event_type_prefix,
      trust_mode,
      origin,
      external_id,
      search,
      drift,
      // The text goes to SQL as is: a JavaScript Date would drop the microseconds.
      ...(since === undefined ? {} : byId ? { after_id: Number(since) } : { since_time: String(since) }),
      limit,
      cursor,
    });
    // As the UI API's list: each row says how its latest replay or forward went.
    const last = await deps.store.lastReplays(stored.items.map((event) => event.id));
    const page = fitPage({ ...stored, items: stored.items.map((event) => ({ ...event, last_replay: last.get(event.id) ?? null })) });
    return {
      events: page.items,
      ...(page.next_cursor === undefined ? {} : { next_cursor: page.next_cursor }),
      ...(page.searched_back_to === undefined ? {} : { searched_back_to: page.searched_back_to }),
      ...(page.index_progress === undefined ? {} : { index_progress: page.index_progress }),
    };
  });
}
