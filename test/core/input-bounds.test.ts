import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_REPLAY_BURST } from '../../src/core/mcp/setup.js';
import { startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../helpers/core.js';
import { connectMcp, type McpTestClient } from '../helpers/mcp.js';
import { startConsumer, type Consumer } from './replay/consumer.js';

/**
 * What a caller sends that the core cannot hold or HTTP cannot carry (#22.16): an override nested
 * 50,000 arrays deep, a replay header with ESC or a character outside Latin-1. Each is the
 * caller's `invalid_argument`, through the UI API and MCP alike — never `internal`, and never
 * after a rate-limit token was spent.
 */

let t: TestSwitchboard;
let mcp: McpTestClient;
let consumer: Consumer;
let eventId: number;

/** `[[[…[1]…]]]`, `depth` arrays deep, built without recursion. */
function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/** The JSON text of `nested(depth)`: JSON.stringify itself would overflow the stack. */
const nestedJson = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

beforeAll(async () => {
  consumer = await startConsumer();
  t = await startTestSwitchboard({ providers: [{ name: 'stripe', kind: 'stripe', secrets: [{ value: 'whsec_input_bounds_0123456789abcdef' }] }, { name: 'homelab', kind: 'open' }] });
  mcp = await connectMcp(t);
  eventId = (await t.deliver('/webhooks/homelab', JSON.stringify({ type: 'bounds', n: 1 }), { 'content-type': 'application/json' })).json.id;
});
afterAll(async () => {
  await mcp?.close();
  await t?.close();
  await consumer?.close();
});

/** POST raw JSON text to the UI API (the body is written by hand: it may be too deep to stringify). */
async function apiRaw(method: string, json: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${t.sb.url.control}/api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_TOKEN}` }, body: json });
  return { status: response.status, body: await response.json() };
}

/**
 * A tools/call whose JSON text is written by hand: the SDK client would JSON.stringify the
 * arguments itself, and overflow its own stack. The session is opened as the SDK would.
 */
async function rawToolCall(name: string, argumentsJson: string): Promise<{ isError?: boolean; structuredContent?: any }> {
  const url = t.sb.url.mcp;
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${TEST_TOKEN}` };
  const init = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
  });
  const session = init.headers.get('mcp-session-id')!;
  await init.text();
  const withSession = { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
  await (await fetch(url, { method: 'POST', headers: withSession, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
  const answer = await fetch(url, { method: 'POST', headers: withSession, body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"${name}","arguments":${argumentsJson}}}` });
  const text = await answer.text();
  const data = text.trimStart().startsWith('{') ? text : text.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('');
  await fetch(url, { method: 'DELETE', headers: withSession }).catch(() => undefined);
  return (JSON.parse(data) as { result: { isError?: boolean; structuredContent?: unknown } }).result as never;
}

describe('an override nested too deep', () => {
  it('sendTestEvent (API): invalid_argument naming the bound, 50,000 arrays deep and just over the bound', async () => {
    for (const depth of [50_000, 101]) {
      const { status, body } = await apiRaw('sendTestEvent', `{"provider":"stripe","event_type":"invoice.paid","overrides":{"data.object.metadata":${nestedJson(depth)}}}`);
      expect(status, JSON.stringify(body)).toBe(400);
      expect(body.error).toMatchObject({ code: 'invalid_argument', message: expect.stringMatching(/nests deeper than 100 levels/) });
    }
    // At the bound it is sent.
    const fine = await apiRaw('sendTestEvent', JSON.stringify({ provider: 'stripe', event_type: 'invoice.paid', overrides: { 'data.object.metadata': nested(99) } }));
    expect(fine.status, JSON.stringify(fine.body)).toBe(200);
  });

  it('send_test_event (MCP) and a replay with --set: invalid_argument too', async () => {
    const result = await rawToolCall('send_test_event', `{"provider":"stripe","overrides":{"data.object.metadata":${nestedJson(50_000)}}}`);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ code: 'invalid_argument', message: expect.stringMatching(/nests deeper/) });
    const replay = await apiRaw('replayEvent', `{"id":${eventId},"target_url":"${consumer.url('/deep')}","overrides":{"n":${nestedJson(50_000)}}}`);
    expect(replay.status).toBe(400);
    expect(replay.body.error.code).toBe('invalid_argument');
    expect(consumer.requests).toHaveLength(0);
  });
});

describe('a replay header HTTP cannot carry', () => {
  it('ESC, DEL or a character outside Latin-1 is invalid_argument before a request or a rate-limit token', async () => {
    for (const value of ['a\u001b[2Jb', 'del\u007f', 'euro €', 'emoji 😀']) {
      const { status, body } = await apiRaw('replayEvent', JSON.stringify({ id: eventId, target_url: consumer.url('/h'), headers: { 'x-note': value } }));
      expect(status, value).toBe(400);
      expect(body.error.message).toMatch(/header x-note has a (control character|character outside Latin-1)/);
    }
    // Through MCP, more times than the burst allows: still invalid_argument, never rate_limited…
    for (let i = 0; i < MCP_REPLAY_BURST + 2; i++) {
      await mcp.error('replay_webhook_event', { id: eventId, target_url: consumer.url('/h'), headers: { 'x-note': 'a\u001bb' } }, 'invalid_argument');
    }
    expect(consumer.requests).toHaveLength(0);
    // …and the tokens are still there for a good replay; a Latin-1 value (é) is fine.
    const good = await mcp.ok('replay_webhook_event', { id: eventId, target_url: consumer.url('/h'), headers: { 'x-note': 'café\tok' } });
    expect(good.delivered).toBe(true);
    expect(consumer.requests.at(-1)!.headers['x-note']).toBe(Buffer.from('café\tok', 'latin1').toString('latin1'));
  });
});
