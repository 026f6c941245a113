import { z } from 'zod';
import { EventSummarySchema, type EventSummary } from '../../../shared/events.js';
import { inputText, MAX_NAME_CHARS } from '../../../shared/input.js';
import type { EventBus } from '../../bus.js';
import type { McpDeps } from '../deps.js';
import { checkProviderFilter } from '../provider-filter.js';
import type { ToolServer, ToolSpec } from '../tool.js';

export const MAX_WAIT_S = 120;
export const DEFAULT_WAIT_S = 30;
/** Keeps long waits alive for clients that reset their request timeout on progress. */
export const WAIT_PROGRESS_INTERVAL_MS = 5_000;

export const WaitForWebhookEventInputSchema = z.strictObject({
  provider: inputText(MAX_NAME_CHARS).optional().describe('only an event of this provider'),
  event_type: inputText().optional().describe('only an event of this type, e.g. "push"'),
  after: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe('an event id: a stored event after it answers at once; omit to wait for the next new one'),
  timeout_s: z
    .number()
    .min(0)
    .max(MAX_WAIT_S)
    .default(DEFAULT_WAIT_S)
    .describe(`seconds to wait for it, at most ${MAX_WAIT_S}`),
});

export const WaitForWebhookEventOutputSchema = z.strictObject({
  event: EventSummarySchema.nullable().describe('the first matching event, or null when none arrived in time'),
});

export const WAIT_FOR_WEBHOOK_EVENT_TOOL: ToolSpec<typeof WaitForWebhookEventInputSchema, typeof WaitForWebhookEventOutputSchema> = {
  name: 'wait_for_webhook_event',
  title: 'Wait for a webhook event',
  description:
    'Wait for the webhook an action causes (a test payment, a push, send_test_event): the first matching event, or ' +
    '{event: null} after timeout_s. Pass the newest event id you have seen as after, so an earlier arrival is not missed.',
  inputSchema: WaitForWebhookEventInputSchema,
  outputSchema: WaitForWebhookEventOutputSchema,
  annotations: { title: 'Wait for a webhook event', readOnlyHint: true, openWorldHint: false },
  example: {
    arguments: { provider: 'github', event_type: 'push', after: 1042, timeout_s: 60 },
    result: {
      event: {
        id: 1043,
        provider: 'github',
        family: 'webhook',
        event_type: 'push',
        external_id: '5c4e9a80-ae1f-11f0-8f1e-3d4c9b1e7a20',
        origin: 'provider',
        trust_mode: 'signed',
        verified: true,
        payload_size: 7410,
        received_at: '2026-11-30T09:44:31.000917Z',
        attempts: 1,
        drift: false,
      },
    },
  },
};

export function registerWaitForWebhookEventTool(server: ToolServer, deps: McpDeps): void {
  server.registerTool(WAIT_FOR_WEBHOOK_EVENT_TOOL, async ({ provider, event_type, after, timeout_s }, context) => {
    // A misspelt provider would wait out the whole timeout for an event that can never match.
    await checkProviderFilter(deps, provider);
    const matches = (event: EventSummary) =>
      (provider === undefined || event.provider === provider) &&
      (event_type === undefined || event.event_type === event_type) &&
      (after === undefined || event.id > after);
    // Listen before looking in the store: an event committed in between is then caught by one
    // or the other (the bus announces only what is already committed).
    const watch = watchBus(deps.bus, matches);
    try {
      if (after !== undefined) {
        const stored = await deps.store.firstEventAfter({ provider, event_type, after_id: after });
        if (stored) return { event: stored };
      }
      return { event: await watch.next(timeout_s * 1000, context.signal, context.progress) };
    } finally {
      watch.close();
    }
  });
}

interface BusWatch {
  /** The first match seen since the watch began; null at the timeout or when aborted. */
  next(timeoutMs: number, signal: AbortSignal, progress: (elapsedS: number, totalS: number) => Promise<void>): Promise<EventSummary | null>;
  close(): void;
}

function watchBus(bus: EventBus, matches: (event: EventSummary) => boolean): BusWatch {
  let found: EventSummary | null = null;
  let wake: (() => void) | undefined;
  const onEvent = (event: EventSummary) => {
    if (found === null && matches(event)) {
      found = event;
      wake?.();
    }
  };
  bus.on('event', onEvent);
  let cleanup: (() => void) | undefined;
  return {
    next(timeoutMs, signal, progress) {
      if (found !== null || signal.aborted) return Promise.resolve(found);
      return new Promise((resolve) => {
        const started = Date.now();
        const done = () => {
          cleanup?.();
          resolve(found);
        };
        const timer = setTimeout(done, timeoutMs);
        const heartbeat = setInterval(() => {
          progress(Math.round((Date.now() - started) / 1000), timeoutMs / 1000).catch(() => {});
        }, WAIT_PROGRESS_INTERVAL_MS);
        cleanup = () => {
          clearTimeout(timer);
          clearInterval(heartbeat);
          signal.removeEventListener('abort', done);
          wake = undefined;
        };
        wake = done;
        signal.addEventListener('abort', done, { once: true });
      });
    },
    close() {
      bus.off('event', onEvent);
      cleanup?.();
    },
  };
}
