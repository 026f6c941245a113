import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { expect } from 'vitest';
import { MAX_TEXT_COPY_CHARS } from '../../src/core/mcp/tool.js';
import { TEST_TOKEN, type TestSwitchboard } from './core.js';

const SPEC_PATH = 'docs/openspec/specs/mcp-tools/spec.md';

/**
 * Each tool's output schema as published in docs/openspec/specs/mcp-tools/spec.md (the first
 * JSON block after its "### Output schema" heading), so tests check real answers against the
 * document agents read, not against the code that generated it.
 */
function publishedOutputSchemas(): Map<string, Record<string, unknown>> {
  const text = readFileSync(SPEC_PATH, 'utf8');
  const schemas = new Map<string, Record<string, unknown>>();
  for (const section of text.split(/^## `/m).slice(1)) {
    const name = section.slice(0, section.indexOf('`'));
    const output = /### Output schema\s+```json\n([\s\S]*?)\n```/.exec(section);
    if (output) schemas.set(name, JSON.parse(output[1]!) as Record<string, unknown>);
  }
  return schemas;
}

const ajv = new Ajv2020({ allErrors: true, strict: true, formats: { uri: true, 'date-time': true, date: true } });
const validators = new Map<string, ValidateFunction>([...publishedOutputSchemas()].map(([name, schema]) => [name, ajv.compile(schema)]));

/** Checks a tool's structuredContent (result or error) against its schema in spec.md. */
export function expectPublishedOutput(name: string, structuredContent: unknown): void {
  const validate = validators.get(name);
  expect(validate, `${name} is not in ${SPEC_PATH}`).toBeDefined();
  expect(validate!(structuredContent), `${name}: ${ajv.errorsText(validate!.errors)}`).toBe(true);
}

export interface McpTestClient {
  client: Client;
  /** Calls a tool; checks the answer against the published schema and its text copy. */
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  ok<T = Record<string, any>>(name: string, args?: Record<string, unknown>): Promise<T>;
  /** Expects an error result with this code; returns its message. */
  error(name: string, args: Record<string, unknown>, code: string): Promise<string>;
  close(): Promise<void>;
}

export async function connectMcp(t: TestSwitchboard): Promise<McpTestClient> {
  const client = new Client({ name: 'switchboard-agent-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(t.sb.url.mcp), { requestInit: { headers: { authorization: `Bearer ${TEST_TOKEN}` } } }),
  );
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    expectPublishedOutput(name, result.structuredContent);
    expectTextCopy(result);
    return result;
  };
  return {
    client,
    call,
    async ok<T>(name: string, args: Record<string, unknown> = {}) {
      const result = await call(name, args);
      expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
      return result.structuredContent as T;
    },
    async error(name, args, code) {
      const result = await call(name, args);
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toEqual({ code, message: expect.any(String) });
      return (result.structuredContent as { message: string }).message;
    },
    close: () => client.close(),
  };
}

/**
 * The text block repeats structuredContent as JSON, except that past MAX_TEXT_COPY_CHARS a long
 * top-level string (a payload) is replaced by a note instead of being sent twice.
 */
export function expectTextCopy(result: CallToolResult): void {
  const block = result.content[0];
  expect(block?.type).toBe('text');
  const text = (block as { text: string }).text;
  expect(text.length).toBeLessThanOrEqual(Math.max(MAX_TEXT_COPY_CHARS, JSON.stringify(result.structuredContent).length));
  const copy = JSON.parse(text) as Record<string, unknown>;
  const structured = result.structuredContent as Record<string, unknown>;
  if (JSON.stringify(structured).length <= MAX_TEXT_COPY_CHARS) {
    expect(copy).toEqual(structured);
    return;
  }
  expect(Object.keys(copy).sort()).toEqual(Object.keys(structured).sort());
  for (const [key, value] of Object.entries(structured)) {
    if (JSON.stringify(copy[key]) !== JSON.stringify(value)) expect(copy[key]).toMatch(new RegExp(`^«\\d+ characters, not repeated in this text copy: read structuredContent\\.${key}»$`));
  }
}

/** Bytes a tool answer costs on the wire, roughly: structuredContent plus the text copy. */
export function outputSize(result: CallToolResult): number {
  return Buffer.byteLength(JSON.stringify(result));
}
