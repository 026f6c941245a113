import { z } from 'zod';
import { inputText, MAX_NAME_CHARS } from '../../../shared/input.js';
import type { McpDeps } from '../deps.js';
import type { ToolServer, ToolSpec } from '../tool.js';

/** DESIGN §6/§16: bounded — at most this many fields, then fields_truncated. */
export const MAX_MCP_FIELDS = 300;
const MAX_MCP_DRIFT = 5;

export const DescribeEventTypeInputSchema = z.strictObject({
  provider: inputText(MAX_NAME_CHARS).describe('provider name'),
  event_type: inputText().describe('e.g. push'),
});

// Lean on purpose: every agent's context holds tools/list (DESIGN §6).
const ChangeSchema = z.strictObject({ path: z.string(), change: z.string().describe('added, missing or type_changed') });

export const DescribeEventTypeOutputSchema = z.strictObject({
  provider: z.string(),
  event_type: z.string(),
  events_seen: z.number().int(),
  first_seen: z.string().nullable(),
  last_seen: z.string().nullable(),
  fields: z.array(z.strictObject({ path: z.string(), types: z.array(z.string()), presence: z.number() })).describe('presence: share of events, 0–1'),
  fields_truncated: z.boolean(),
  drift: z.array(z.strictObject({ event_id: z.number().int(), changes: z.array(ChangeSchema) })).describe('recent drifted events'),
  spec_violations: z.array(z.strictObject({ path: z.string(), message: z.string() })).optional().describe("GitHub's schema, latest event"),
  typescript: z.string(),
});

export const DESCRIBE_EVENT_TYPE_TOOL: ToolSpec<typeof DescribeEventTypeInputSchema, typeof DescribeEventTypeOutputSchema> = {
  name: 'describe_event_type',
  title: 'Describe an event type',
  description:
    'The schema of an event type, inferred from every stored JSON event: fields (types, presence), recent drift, ' +
    'GitHub schema violations, and TypeScript for a handler.',
  inputSchema: DescribeEventTypeInputSchema,
  outputSchema: DescribeEventTypeOutputSchema,
  annotations: { title: 'Describe an event type', readOnlyHint: true, openWorldHint: false },
  example: {
    arguments: { provider: 'github', event_type: 'push' },
    result: {
      provider: 'github',
      event_type: 'push',
      events_seen: 42,
      last_seen: '2026-11-30T09:41:07.123456Z',
      fields: [
        { path: 'ref', types: ['string'], presence: 1 },
        { path: 'head_commit', types: ['object', 'null'], presence: 1 },
        { path: 'commits[].id', types: ['string'], presence: 0.97 },
      ],
      fields_truncated: false,
      first_seen: '2026-11-30T09:00:01.000000Z',
      drift: [{ event_id: 1042, changes: [{ path: 'pusher.date', change: 'added' }] }],
      typescript: 'export interface GithubPush {\n  ref: string;\n  head_commit: GithubPushHeadCommit | null;\n  commits?: GithubPushCommitsItem[];\n}\n',
    },
  },
};

export function registerDescribeEventTypeTool(server: ToolServer, deps: McpDeps): void {
  server.registerTool(DESCRIBE_EVENT_TYPE_TOOL, async ({ provider, event_type }) => {
    const shape = await deps.shapes.describe(provider, event_type, { maxFields: MAX_MCP_FIELDS });
    return {
      provider: shape.provider,
      event_type: shape.event_type,
      events_seen: shape.events_seen,
      first_seen: shape.first_seen,
      last_seen: shape.last_seen,
      // No example values: they come from payloads (untrusted, possibly personal).
      fields: shape.fields.map(({ path, types, presence }) => ({ path, types, presence })),
      fields_truncated: shape.fields_truncated,
      drift: shape.drift.slice(0, MAX_MCP_DRIFT).map((event) => ({
        event_id: event.event_id,
        changes: event.changes.slice(0, 10).map(({ path, change }) => ({ path, change })),
      })),
      ...(shape.spec_violations ? { spec_violations: shape.spec_violations.violations } : {}),
      typescript: shape.types.typescript,
    };
  });
}
