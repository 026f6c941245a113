import type { ToolSpec } from '../tool.js';
import { DESCRIBE_EVENT_TYPE_TOOL } from './describe-event-type.js';
import { GET_WEBHOOK_EVENT_TOOL } from './get-webhook-event.js';
import { LIST_PROVIDERS_TOOL } from './list-providers.js';
import { LIST_REJECTIONS_TOOL } from './list-rejections.js';
import { LIST_WEBHOOK_EVENTS_TOOL } from './list-webhook-events.js';
import { REPLAY_WEBHOOK_EVENT_TOOL } from './replay-webhook-event.js';
import { RUN_SUITE_TOOL } from './run-suite.js';
import { SEND_TEST_EVENT_TOOL } from './send-test-event.js';
import { WAIT_FOR_WEBHOOK_EVENT_TOOL } from './wait-for-webhook-event.js';

/** Every tool, in the order of DESIGN §6; the spec document is generated from this list. */
export const TOOL_SPECS: readonly ToolSpec[] = [
  LIST_WEBHOOK_EVENTS_TOOL,
  GET_WEBHOOK_EVENT_TOOL,
  REPLAY_WEBHOOK_EVENT_TOOL,
  LIST_PROVIDERS_TOOL,
  WAIT_FOR_WEBHOOK_EVENT_TOOL,
  LIST_REJECTIONS_TOOL,
  SEND_TEST_EVENT_TOOL,
  RUN_SUITE_TOOL,
  DESCRIBE_EVENT_TYPE_TOOL,
] as readonly ToolSpec[];
