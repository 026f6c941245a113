import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpError, SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { toEventDetail } from '../wire.js';
import type { McpDeps } from './deps.js';

export const RECENT_EVENTS_URI = 'switchboard://events/recent';
export const EVENT_URI_TEMPLATE = 'switchboard://events/{id}';
export const RECENT_EVENTS_LIMIT = 50;
/** A burst of deliveries becomes one `notifications/resources/updated` per window. */
export const RESOURCE_UPDATE_COALESCE_MS = 200;
/** JSON-RPC code the MCP spec gives "resource not found". */
const RESOURCE_NOT_FOUND = -32002;

export interface EventResources {
  close(): void;
}

/**
 * `switchboard://events/recent` (subscribable) and `switchboard://events/{id}`, for one session.
 * `McpServer` has no subscriptions of its own (STACK.md): the capability is declared by the
 * server factory, and subscribe/unsubscribe are handled here on the low-level server.
 */
export function registerEventResources(mcp: McpServer, deps: McpDeps): EventResources {
  mcp.registerResource(
    'recent-events',
    RECENT_EVENTS_URI,
    {
      title: 'Recent webhook events',
      description: `The ${RECENT_EVENTS_LIMIT} newest event summaries, newest first ({events: EventSummary[]}). Subscribe to hear when new events arrive.`,
      mimeType: 'application/json',
    },
    async (uri) => {
      const page = await deps.store.listEvents({ limit: RECENT_EVENTS_LIMIT });
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify({ events: page.items }) }] };
    },
  );

  mcp.registerResource(
    'event',
    new ResourceTemplate(EVENT_URI_TEMPLATE, { list: undefined }),
    {
      title: 'Webhook event',
      description: 'One stored event in full (EventDetail): sanitized headers and the payload (utf8 text or base64).',
      mimeType: 'application/json',
    },
    async (uri, variables) => {
      const text = String(variables.id);
      const id = /^[1-9][0-9]{0,14}$/.test(text) ? Number(text) : null;
      const record = id === null ? null : await deps.store.getEvent(id);
      if (!record) throw new McpError(RESOURCE_NOT_FOUND, `no event ${uri.href}`);
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(toEventDetail(record)) }] };
    },
  );

  // Any URI may be subscribed (the protocol only asks us to track it); only the recent-events
  // list ever changes, since stored events are immutable.
  const subscribed = new Set<string>();
  let pending: NodeJS.Timeout | undefined;
  const notify = () => {
    pending = undefined;
    mcp.server.sendResourceUpdated({ uri: RECENT_EVENTS_URI }).catch((error: Error) => deps.logger.warn(`mcp: resource update not sent: ${error.message}`));
  };
  const onEvent = () => {
    pending ??= setTimeout(notify, RESOURCE_UPDATE_COALESCE_MS);
  };
  /** Listens on the bus exactly while someone is subscribed to the recent-events list. */
  const sync = () => {
    deps.bus.off('event', onEvent);
    if (subscribed.has(RECENT_EVENTS_URI)) {
      deps.bus.on('event', onEvent);
    } else {
      clearTimeout(pending);
      pending = undefined;
    }
  };

  mcp.server.setRequestHandler(SubscribeRequestSchema, (request) => {
    subscribed.add(request.params.uri);
    sync();
    return {};
  });
  mcp.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    subscribed.delete(request.params.uri);
    sync();
    return {};
  });

  return {
    close() {
      subscribed.clear();
      sync();
    },
  };
}
