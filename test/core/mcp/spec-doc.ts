import { z } from 'zod';
import { EventDetailSchema, EventSummarySchema } from '../../../src/shared/events.js';
import { eventNotFound } from '../../../src/core/errors.js';
import { DEFAULT_MAX_PAYLOAD_BYTES } from '../../../src/core/mcp/tools/get-webhook-event.js';
import { EVENT_URI_TEMPLATE, RECENT_EVENTS_LIMIT, RECENT_EVENTS_URI, RESOURCE_UPDATE_COALESCE_MS } from '../../../src/core/mcp/resources.js';
import { MAX_PAGE_JSON_CHARS } from '../../../src/core/mcp/page-budget.js';
import { MAX_MCP_BODY_BYTES } from '../../../src/core/mcp/sessions.js';
import { jsonSchema, MAX_TEXT_COPY_CHARS, TOOL_ERROR_CODES, ToolErrorSchema, toolJsonSchemas } from '../../../src/core/mcp/tool.js';
import { TOOL_SPECS } from '../../../src/core/mcp/tools/catalog.js';

/**
 * Renders docs/openspec/specs/mcp-tools/spec.md from the zod schemas the server uses. The spec
 * test compares the file with this output (and rewrites it with UPDATE_MCP_SPEC=1).
 */
export const SPEC_PATH = 'docs/openspec/specs/mcp-tools/spec.md';

const json = (value: unknown) => ['```json', JSON.stringify(value, null, 2), '```'].join('\n');
const dataSchema = (schema: z.ZodType) => jsonSchema(schema, 'output');

const ERROR_MEANINGS: Record<(typeof TOOL_ERROR_CODES)[number], string> = {
  not_found: `no event with that id (never stored, or removed by retention or a clear), or no suite of that name (the message names the suites that exist); every tool words a missing event the same: "${eventNotFound(99999).message}"`,
  invalid_argument:
    'the arguments break the input schema (e.g. `limit: 500`), a cursor this server did not issue, a provider that is neither configured nor in the stored events (the message lists the configured ones), a replay target that is missing, malformed or not an allowed host, or a signature header in `headers` while re-signing (pass `resign: false` to send your own)',
  replay_failed: 'the replay target did not answer (connection refused, timeout); the message names the replay row, the target and the cause. A non-2xx answer is a result, not this error',
  rate_limited: 'too many replays, test events and suite runs with this bearer token (all its sessions together); the message says when to retry',
  internal: 'a failure on switchboard’s side (e.g. the database is down); the details are in its log',
};

export function renderToolsSpec(): string {
  const out: string[] = [
    '# MCP tools (switchboard)',
    '',
    '<!-- Generated from the zod schemas in src/core/mcp/tools/ by test/core/mcp/spec.test.ts. Do not edit by hand:',
    '     UPDATE_MCP_SPEC=1 npx vitest run test/core/mcp/spec.test.ts -->',
    '',
    'The contract of DESIGN §6 (the seed’s ADR-0005), in machine-readable form. Streamable HTTP at',
    '`http://127.0.0.1:7778/mcp`, server name `switchboard`, stateful sessions (`Mcp-Session-Id`).',
    `Every request needs \`Authorization: Bearer <control token>\` (401 otherwise); a non-loopback \`Host\` or a`,
    `foreign \`Origin\` is refused with 403, a body over ${MAX_MCP_BODY_BYTES} bytes (1 MiB) with 413.`,
    '',
    'Schemas are JSON Schema 2020-12 (the MCP default dialect, so they carry no `$schema`), exactly as',
    '`tools/list` returns them, with no union `type` arrays (a nullable field is `anyOf: [{…}, {"type": "null"}]`)',
    'so strict validators accept them. Inputs reject unknown properties. Output schemas give the shape (types,',
    'enums, required fields) without descriptions or bounds, since `tools/list` sits in every agent’s context',
    '(DESIGN §6: the whole answer stays under 20,000 characters); what the fields mean is in the tool',
    'descriptions and the EventSummary / EventDetail sections below. A result is returned both as',
    '`structuredContent` and as its JSON text in `content[0].text`; when that text would exceed',
    `${MAX_TEXT_COPY_CHARS} characters, its longest top-level strings (a large payload) are replaced by a note pointing to`,
    '`structuredContent`, so nothing large is sent twice. Payloads and response bodies are untrusted data.',
    '',
    '## Errors',
    '',
    'A failed call is a result with `isError: true` whose `structuredContent` (and `content[0].text`, as JSON)',
    'is a ToolError. Each output schema is therefore "the result, or a ToolError" (`anyOf`), so a client',
    'that validates `structuredContent` against the output schema accepts error results too (the',
    'TypeScript SDK 1.32 client does so even for `isError` results). Messages never contain a secret.',
    '',
    '| code | meaning |',
    '|---|---|',
    ...TOOL_ERROR_CODES.map((code) => `| \`${code}\` | ${ERROR_MEANINGS[code]} |`),
    '',
    json(dataSchema(ToolErrorSchema)),
    '',
    'Example (`get_webhook_event` with an unknown id):',
    '',
    json({
      isError: true,
      structuredContent: { code: 'not_found', message: eventNotFound(99999).message },
      content: [{ type: 'text', text: JSON.stringify({ code: 'not_found', message: eventNotFound(99999).message }) }],
    }),
    '',
  ];

  for (const spec of TOOL_SPECS) {
    const schemas = toolJsonSchemas(spec);
    const hints = Object.entries(spec.annotations)
      .filter(([name]) => name !== 'title')
      .map(([name, value]) => `\`${name}: ${String(value)}\``)
      .join(', ');
    out.push(
      `## \`${spec.name}\``,
      '',
      `**${spec.title}.** ${spec.description}`,
      '',
      `Annotations: ${hints}.`,
      '',
      '### Input schema',
      '',
      json(schemas.inputSchema),
      '',
      '### Output schema',
      '',
      json(schemas.outputSchema),
      '',
      '### Example',
      '',
      'Request:',
      '',
      json({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: spec.name, arguments: spec.example.arguments } }),
      '',
      '`structuredContent` of the result:',
      '',
      json(spec.example.result),
      '',
    );
  }

  out.push(
    '## Resources',
    '',
    `- \`${RECENT_EVENTS_URI}\` (\`application/json\`): \`{"events": EventSummary[]}\`, the ${RECENT_EVENTS_LIMIT} newest, newest first`,
    `  (fewer when they would exceed ${MAX_PAGE_JSON_CHARS} characters of JSON, like a list_webhook_events page).`,
    '  Subscribable: after `resources/subscribe`, the server sends `notifications/resources/updated` with this',
    `  URI when new events are stored, at most one per ${RESOURCE_UPDATE_COALESCE_MS} ms under a burst. Any URI may be subscribed; only`,
    '  this one ever changes (stored events are immutable).',
    `- Template \`${EVENT_URI_TEMPLATE}\` (\`application/json\`): the EventDetail of one event, bounded like`,
    `  \`get_webhook_event\` by default: the payload cut to ${DEFAULT_MAX_PAYLOAD_BYTES} bytes, with \`payload_truncated\`; an unknown id is`,
    '  JSON-RPC error -32002 (resource not found).',
    '',
    '### EventSummary',
    '',
    json(dataSchema(EventSummarySchema)),
    '',
    '### EventDetail',
    '',
    json(dataSchema(EventDetailSchema)),
    '',
  );
  return out.join('\n');
}
