import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
  type ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { isSwitchboardError } from '../errors.js';
import type { Logger } from '../logger.js';
import { scrubSecrets } from './scrub.js';

/**
 * Our own `tools/list` and `tools/call`, instead of `McpServer.registerTool`, because DESIGN §6
 * fixes the error shape and the SDK does not let us reach it:
 * - the SDK turns a schema violation into a plain-text tool error ("Input validation error: …");
 *   ours is `{code: 'invalid_argument', message}` like every other error;
 * - error results carry `structuredContent: {code, message}`, and the SDK 1.32 client validates
 *   structuredContent against the tool's outputSchema even when `isError` is set
 *   (typescript-sdk#1943), so each declared outputSchema is "the result, or a ToolError". Any
 *   client then accepts both, and the schemas clients see are exactly the ones
 *   docs/openspec/specs/mcp-tools/spec.md is generated from (`toolJsonSchemas`).
 */

export const TOOL_ERROR_CODES = ['not_found', 'invalid_argument', 'replay_failed', 'rate_limited', 'internal'] as const;
export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[number];

export const ToolErrorSchema = z
  .strictObject({
    code: z.enum(TOOL_ERROR_CODES).describe('stable error code'),
    message: z.string().describe('what went wrong, in words; never contains a secret'),
  })
  .describe('the structuredContent of an isError result');
export type ToolError = z.infer<typeof ToolErrorSchema>;

export interface ToolSpec<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  /** Verb-first snake_case. */
  name: string;
  title: string;
  description: string;
  inputSchema: I;
  outputSchema: O;
  annotations: ToolAnnotations;
  /** A worked call for the spec document; tests check it against the schemas. */
  example: { arguments: z.input<I>; result: z.output<O> };
}

export interface ToolContext {
  /** Aborted when the client cancels the call, closes its session or drops the connection. */
  signal: AbortSignal;
  /** Sends `notifications/progress` when the caller asked for it (a `progressToken`). */
  progress(progress: number, total?: number, message?: string): Promise<void>;
}

export type ToolHandler<I extends z.ZodObject, O extends z.ZodObject> = (input: z.output<I>, context: ToolContext) => Promise<z.output<O>>;

type JsonObjectSchema = Tool['inputSchema'];

/** A zod schema as the JSON Schema clients receive (tools/list, the spec document). */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  // 2020-12 is the MCP default dialect, so `$schema` is left out of what clients receive.
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, target: 'draft-2020-12' });
  return portable(rest) as Record<string, unknown>;
}

/** Keywords that describe a schema rather than constrain a value: they stay outside an anyOf. */
const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly']);
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', 'required']);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);

/** Every JSON type: "any JSON value", spelled so that a schema still names its types. */
const JSON_TYPES = ['string', 'number', 'boolean', 'object', 'array', 'null'] as const;

/**
 * Rewrites what strict clients (MCP Inspector `--strict`, code generators, single-`type`
 * dialects) warn about or refuse, keeping the meaning:
 * - zod writes a nullable primitive as `type: ["string", "null"]`; it becomes
 *   `anyOf: [{type: "string", …}, {type: "null"}]`;
 * - an unconstrained schema (`{}`, from z.unknown(), e.g. a test event's override values) accepts
 *   any value but names no type; it becomes an `anyOf` of every JSON type.
 * And leaves out what says nothing a client needs, since tools/list sits in every agent's
 * context (DESIGN §6: the whole answer ≤ 20,000 characters): the ±2^53 bounds zod puts on every
 * integer, a `pattern` beside a `format` that already names it (an ISO date-time), and
 * `propertyNames: {type: "string"}` (JSON keys are strings).
 */
function portable(node: unknown, parentKey = ''): unknown {
  if (Array.isArray(node)) return node.map((item) => portable(item, parentKey));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (saysNothing(node as Record<string, unknown>, key, value)) continue;
    // Values and property names are data, not schemas: a property called "type" stays as it is.
    if (DATA_KEYWORDS.has(key)) out[key] = value;
    else if (SCHEMA_MAPS.has(key)) out[key] = mapValues(value, (inner) => portable(inner, key));
    else out[key] = portable(value, key);
  }
  if (parentKey !== 'not' && Object.keys(out).every((key) => ANNOTATIONS.has(key))) {
    return { ...out, anyOf: JSON_TYPES.map((type) => ({ type })) };
  }
  const types = out.type;
  if (!Array.isArray(types)) return out;
  const outer: Record<string, unknown> = {};
  const inner: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(out)) {
    if (key === 'type') continue;
    (ANNOTATIONS.has(key) ? outer : inner)[key] = value;
  }
  return { ...outer, anyOf: (types as string[]).map((type) => (type === 'null' ? { type } : { type, ...inner })) };
}

function saysNothing(node: Record<string, unknown>, key: string, value: unknown): boolean {
  if (key === 'maximum') return value === Number.MAX_SAFE_INTEGER;
  if (key === 'minimum') return value === Number.MIN_SAFE_INTEGER;
  if (key === 'pattern') return typeof node.format === 'string';
  if (key === 'propertyNames') return JSON.stringify(value) === '{"type":"string"}';
  return false;
}

/** Keywords that bound a value the server produces: a client has nothing to check them for. */
const OUTPUT_BOUNDS = new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'minItems', 'maxItems']);

/**
 * An output schema as tools/list sends it: the shape (types, enums, required fields), without
 * the words, the bounds and the closing of objects. Outputs were most of what tools/list weighs (14,482 of 23,324
 * characters for seven tools), while their field names say what they hold; the meanings are in
 * the tool descriptions, docs/mcp.md and the EventSummary / EventDetail sections of the spec.
 */
function outputShape(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(outputShape);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if ((key === 'description' && typeof value === 'string') || (OUTPUT_BOUNDS.has(key) && typeof value === 'number')) continue;
    // `additionalProperties: false` on what the server answers guards nothing a client sends,
    // and a field added later must not fail an older client's check.
    if (key === 'additionalProperties' && value === false) continue;
    if (DATA_KEYWORDS.has(key)) out[key] = value;
    else if (SCHEMA_MAPS.has(key)) out[key] = mapValues(value, outputShape);
    else out[key] = outputShape(value);
  }
  return out;
}

function mapValues(value: unknown, map: (value: unknown) => unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, map(inner)]));
}

/**
 * The error half of every output schema, as small as it can be and still hold a ToolError (the
 * outer schema says it is an object): the codes are listed once, in the spec's Errors section,
 * rather than in every tool of tools/list.
 */
const TOOL_ERROR_BRANCH = {
  properties: { code: { type: 'string' }, message: { type: 'string' } },
  required: ['code', 'message'],
} as const;

/** The JSON Schemas clients see in tools/list; the spec document is generated from the same. */
export function toolJsonSchemas(spec: ToolSpec): { inputSchema: JsonObjectSchema; outputSchema: JsonObjectSchema } {
  return {
    inputSchema: jsonSchema(spec.inputSchema, 'input') as JsonObjectSchema,
    outputSchema: { type: 'object', anyOf: [outputShape(jsonSchema(spec.outputSchema, 'output')), TOOL_ERROR_BRANCH] },
  };
}

/** The annotations sent: the title is the tool's own `title` already, so it is not sent twice. */
export function toolAnnotations(spec: ToolSpec): ToolAnnotations {
  const { title: _title, ...hints } = spec.annotations;
  return hints;
}

export function toolError(code: ToolErrorCode, message: string): CallToolResult {
  const error: ToolError = { code, message };
  return { isError: true, structuredContent: error, content: [{ type: 'text', text: JSON.stringify(error) }] };
}

/** Beyond this, the text copy of a result leaves out its bulkiest strings (DESIGN §6: bounded output). */
export const MAX_TEXT_COPY_CHARS = 64 * 1024;

function toolResult(value: Record<string, unknown>): CallToolResult {
  return { structuredContent: value, content: [{ type: 'text', text: textCopy(value) }] };
}

/**
 * The JSON text block for clients that read only `content`. It repeats structuredContent, which
 * doubles what a large payload costs (a 1.5 MB payload once made 3.3 MB of tool output): past
 * MAX_TEXT_COPY_CHARS the longest top-level strings are replaced by a note saying where they are.
 */
export function textCopy(value: Record<string, unknown>): string {
  const full = JSON.stringify(value);
  if (full.length <= MAX_TEXT_COPY_CHARS) return full;
  const copy: Record<string, unknown> = { ...value };
  const strings = Object.entries(value)
    .filter((entry): entry is [string, string] => typeof entry[1] === 'string')
    .sort((a, b) => b[1].length - a[1].length);
  for (const [key, text] of strings) {
    copy[key] = `«${text.length} characters, not repeated in this text copy: read structuredContent.${key}»`;
    if (JSON.stringify(copy).length <= MAX_TEXT_COPY_CHARS) break;
  }
  return JSON.stringify(copy);
}

/** "limit: Too big: expected number to be <=200; cursor: …" — what an agent needs to fix its call. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message)).join('; ');
}

interface RegisteredTool {
  spec: ToolSpec;
  run: (input: unknown, context: ToolContext) => Promise<Record<string, unknown>>;
}

export interface ToolServerOptions {
  logger: Logger;
  /** Every configured secret; scrubbed from error messages as a last line of defence. */
  secrets: () => readonly string[];
  /** Aborted when the HTTP connection that carried this request closes early. */
  connectionSignal: (requestId: string | number) => AbortSignal | undefined;
}

export class ToolServer {
  private readonly tools = new Map<string, RegisteredTool>();

  constructor(
    readonly mcp: McpServer,
    private readonly options: ToolServerOptions,
  ) {
    mcp.server.registerCapabilities({ tools: { listChanged: false } });
    mcp.server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [...this.tools.values()].map(({ spec }): Tool => ({
        name: spec.name,
        title: spec.title,
        description: spec.description,
        ...toolJsonSchemas(spec),
        annotations: toolAnnotations(spec),
      })),
    }));
    mcp.server.setRequestHandler(CallToolRequestSchema, (request, extra) => this.call(request.params.name, request.params.arguments, extra));
  }

  registerTool<I extends z.ZodObject, O extends z.ZodObject>(spec: ToolSpec<I, O>, handler: ToolHandler<I, O>): void {
    if (this.tools.has(spec.name)) throw new Error(`tool ${spec.name} is registered twice`);
    this.tools.set(spec.name, { spec, run: (input, context) => handler(input as z.output<I>, context) });
  }

  private async call(name: string, args: unknown, extra: RequestHandlerExtra<ServerRequest, ServerNotification>): Promise<CallToolResult> {
    const tool = this.tools.get(name);
    if (!tool) return toolError('invalid_argument', `there is no tool named "${name}" (see tools/list)`);
    const parsed = tool.spec.inputSchema.safeParse(args ?? {});
    if (!parsed.success) return toolError('invalid_argument', `invalid arguments for ${name}: ${describeIssues(parsed.error)}`);
    const connection = this.options.connectionSignal(extra.requestId);
    const progressToken = extra._meta?.progressToken;
    const context: ToolContext = {
      signal: connection ? AbortSignal.any([extra.signal, connection]) : extra.signal,
      progress: async (progress, total, message) => {
        if (progressToken === undefined) return;
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total, message } });
      },
    };
    try {
      return toolResult(await tool.run(parsed.data, context));
    } catch (error) {
      if (isSwitchboardError(error)) {
        // Core errors outside the MCP set (storage_unavailable, …) are ours, not the caller's.
        const code = (TOOL_ERROR_CODES as readonly string[]).includes(error.code) ? (error.code as ToolErrorCode) : 'internal';
        return toolError(code, scrubSecrets(error.message, this.options.secrets()));
      }
      // Not the caller's fault, and the details stay in our log, not in the agent's context.
      this.options.logger.error(`mcp: ${name} failed: ${scrubSecrets((error as Error).message, this.options.secrets())}`);
      return toolError('internal', `${name} failed with an internal error; the switchboard log has the details`);
    }
  }
}
