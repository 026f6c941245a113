import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, ResourceUpdatedNotificationSchema, type CallToolResult, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RESOURCE_UPDATE_COALESCE_MS } from '../../../src/core/mcp/resources.js';
import { McpSessions } from '../../../src/core/mcp/sessions.js';
import { parseConfig } from '../../../src/core/config.js';
import { migrationsDir } from '../../../src/core/paths.js';
import { ProviderSet } from '../../../src/core/provider-set.js';
import { EventStore } from '../../../src/core/store/event-store.js';
import { migrate } from '../../../src/core/store/migrations.js';
import { openPglite } from '../../../src/core/store/sql-client.js';
import { mcpDeps } from '../../../src/core/mcp/setup.js';
import { toolJsonSchemas } from '../../../src/core/mcp/tool.js';
import { TOOL_SPECS } from '../../../src/core/mcp/tools/catalog.js';
import { KeyedRateLimits } from '../../../src/core/rate-limit.js';
import { memoryLogger, startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../../helpers/core.js';
import { newEvent } from '../../helpers/events.js';
import { expectPublishedOutput, expectTextCopy } from '../../helpers/mcp.js';

const GITHUB_SECRET = 'gh-webhook-secret-for-mcp-tests-0001';
const STRIPE_SECRET = 'whsec_mcp_test_0123456789abcdefghijkl';
const DOCKER_TOKEN = 'dockerhub-mcp-shared-token-9c1e77';
const INLINE_SECRET = 'inline-config-secret-value-4242-abcd';
const SECRETS = [GITHUB_SECRET, STRIPE_SECRET, DOCKER_TOKEN, INLINE_SECRET, TEST_TOKEN];

let t: TestSwitchboard;
let target: { server: Server; url: string; received: { path: string; headers: IncomingHttpHeaders; body: string }[] };
const clients: Client[] = [];
/** Every tool result and resource body seen, for the secret and trust scans at the end. */
const outputs: unknown[] = [];

beforeAll(async () => {
  t = await startTestSwitchboard(
    {
      providers: [
        { name: 'github', kind: 'github', secrets: [{ env: 'GH_SECRET' }] },
        { name: 'stripe', kind: 'stripe', secrets: [{ env: 'STRIPE_SECRET' }] },
        { name: 'dockerhub', kind: 'token', secrets: [{ env: 'DOCKER_TOKEN' }] },
        { name: 'inline', kind: 'github', secrets: [{ value: INLINE_SECRET }] },
        { name: 'homelab', kind: 'open' },
        { name: 'nosecret', kind: 'github', secrets: [{ env: 'UNSET' }] },
      ],
    },
    { env: { GH_SECRET: GITHUB_SECRET, STRIPE_SECRET, DOCKER_TOKEN } },
  );
  const received: { path: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body });
      res.writeHead(req.url === '/fail' ? 500 : 200, { 'content-type': 'text/plain' }).end(req.url === '/fail' ? 'boom' : 'thanks');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  target = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
  await new Promise((resolve) => target?.server.close(resolve));
  await t?.close();
});

async function connect(path = '/mcp'): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'switchboard-mcp-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(path, t.sb.url.control), {
    requestInit: { headers: { authorization: `Bearer ${TEST_TOKEN}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

/** Calls a tool, checks the answer against the tool's published output schema, records it. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}, options?: { signal?: AbortSignal; timeout?: number }) {
  const result = (await client.callTool({ name, arguments: args }, undefined, options)) as CallToolResult;
  outputs.push(result);
  // Unknown tool names are answered too; only real tools have a published schema.
  if (TOOL_SPECS.some((spec) => spec.name === name)) expectPublishedOutput(name, result.structuredContent);
  // The text block carries the same JSON, for clients that ignore structuredContent.
  expectTextCopy(result);
  return result;
}

async function callOk<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown> = {}): Promise<T> {
  const result = await call(client, name, args);
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
  return result.structuredContent as T;
}

async function callError(client: Client, name: string, args: Record<string, unknown>, code: string): Promise<string> {
  const result = await call(client, name, args);
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toEqual({ code, message: expect.any(String) });
  return (result.structuredContent as { message: string }).message;
}

async function deliverOpen(body: string, headers: Record<string, string> = {}): Promise<number> {
  const answer = await t.deliver('/webhooks/homelab', body, { 'content-type': 'application/json', ...headers });
  expect(answer.status).toBe(200);
  return answer.json.id as number;
}

async function deliverGithub(event: string, body: string, delivery: string): Promise<number> {
  const answer = await t.deliver('/webhooks/github', body, {
    'content-type': 'application/json',
    'x-github-event': event,
    'x-github-delivery': delivery,
    'x-hub-signature-256': await githubSign(GITHUB_SECRET, body),
  });
  expect(answer.status).toBe(200);
  return answer.json.id as number;
}


function textOf(resource: ReadResourceResult): string {
  const content = resource.contents[0];
  if (!content || !('text' in content)) throw new Error('expected a text resource');
  return content.text;
}

async function until(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A raw HTTP exchange with /mcp, so tests can send any Host, Origin or body size. */
function raw(method: string, headers: Record<string, string>, body?: string | Buffer, chunked = false): Promise<RawAnswer> {
  const url = new URL(t.sb.url.mcp);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method, headers: { host: url.host, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    // The server may answer 413 and close while the body is still going out.
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)));
    if (body !== undefined && chunked) {
      const data = Buffer.from(body);
      for (let at = 0; at < data.length; at += 64 * 1024) req.write(data.subarray(at, at + 64 * 1024));
      req.end();
    } else {
      req.end(body);
    }
  });
}

const AUTH = { authorization: `Bearer ${TEST_TOKEN}` };
const JSON_RPC = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

describe('server', () => {
  it('identifies as switchboard with tools and subscribable resources', async () => {
    const { client } = await connect();
    expect(client.getServerVersion()).toMatchObject({ name: 'switchboard', version: t.sb.version });
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: { subscribe: true } });
  });

  it('lists exactly its tools (at most nine) with the published schemas and annotations', async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      'list_webhook_events',
      'get_webhook_event',
      'replay_webhook_event',
      'list_providers',
      'wait_for_webhook_event',
      'list_rejections',
      'send_test_event',
      'run_suite',
      'describe_event_type',
    ]);
    expect(tools.length).toBeLessThanOrEqual(9);
    for (const tool of tools) {
      const spec = TOOL_SPECS.find((candidate) => candidate.name === tool.name)!;
      expect({ inputSchema: tool.inputSchema, outputSchema: tool.outputSchema }).toEqual(toolJsonSchemas(spec));
      expect(tool.description).toBeTruthy();
      // The title is sent once, as the tool's own title.
      const { title, ...hints } = spec.annotations;
      expect(tool.annotations).toEqual(hints);
      expect(tool.title).toBe(title);
      if (tool.name === 'replay_webhook_event' || tool.name === 'send_test_event' || tool.name === 'run_suite') {
        expect(tool.annotations).toMatchObject({ openWorldHint: true, readOnlyHint: false, destructiveHint: false });
      } else {
        expect(tool.annotations).toMatchObject({ readOnlyHint: true });
      }
    }
  });

  it('answers an unknown tool as invalid_argument', async () => {
    const { client } = await connect();
    const result = (await client.callTool({ name: 'drop_database', arguments: {} })) as CallToolResult;
    expect(result).toMatchObject({ isError: true, structuredContent: { code: 'invalid_argument' } });
  });
});

describe('list_webhook_events', () => {
  it('lists newest first with filters, and every event says how it was trusted', async () => {
    const { client } = await connect();
    const push = await deliverGithub('push', '{"ref":"refs/heads/main"}', 'list-push-1');
    const open = await deliverOpen('{"hello":"list"}');
    const token = await t.deliver('/webhooks/dockerhub', '{"push_data":{}}', { authorization: `Bearer ${DOCKER_TOKEN}` });
    expect(token.status).toBe(200);

    const all = await callOk<{ events: { id: number; trust_mode: string; verified: boolean; provider: string }[]; next_cursor?: string }>(
      client,
      'list_webhook_events',
    );
    expect(all.events.slice(0, 3).map((event) => event.id)).toEqual([token.json.id, open, push]);
    expect(all.next_cursor).toBeUndefined();
    const byId = new Map(all.events.map((event) => [event.id, event]));
    expect(byId.get(push)).toMatchObject({ provider: 'github', event_type: 'push', trust_mode: 'signed', verified: true });
    expect(byId.get(open)).toMatchObject({ provider: 'homelab', trust_mode: 'open', verified: false });
    expect(byId.get(token.json.id)).toMatchObject({ provider: 'dockerhub', trust_mode: 'token', verified: false });

    const github = await callOk<{ events: { provider: string }[] }>(client, 'list_webhook_events', { provider: 'github', event_type: 'push' });
    expect(github.events.map((event) => event.provider)).toEqual(['github']);
    const none = await callOk<{ events: unknown[] }>(client, 'list_webhook_events', { provider: 'github', event_type: 'issues.opened' });
    expect(none.events).toEqual([]);
  });

  it('takes since as an event id (number or text) or an ISO-8601 time', async () => {
    const { client } = await connect();
    const ids = [await deliverOpen('{"since":1}'), await deliverOpen('{"since":2}'), await deliverOpen('{"since":3}')];
    const list = async (since: unknown) =>
      (await callOk<{ events: { id: number; received_at: string }[] }>(client, 'list_webhook_events', { provider: 'homelab', since })).events.map(
        (event) => event.id,
      );
    expect(await list(ids[0])).toEqual([ids[2], ids[1]]);
    expect(await list(String(ids[1]))).toEqual([ids[2]]);
    const second = (await t.sb.store.getEvent(ids[1]!))!;
    const fromTime = await list(second.received_at);
    expect(fromTime.slice(0, 2)).toEqual([ids[2], ids[1]]);
    expect(fromTime).not.toContain(ids[0]);
    expect(await list('2000-01-01')).toEqual(expect.arrayContaining(ids));
    expect(await list('2999-01-01T00:00:00+02:00')).toEqual([]);
  });

  it('refuses bad arguments and cursors with invalid_argument', async () => {
    const { client } = await connect();
    expect(await callError(client, 'list_webhook_events', { limit: 500 }, 'invalid_argument')).toMatch(/limit/);
    expect(await callError(client, 'list_webhook_events', { limit: 0 }, 'invalid_argument')).toMatch(/limit/);
    expect(await callError(client, 'list_webhook_events', { limit: 2.5 }, 'invalid_argument')).toMatch(/limit/);
    expect(await callError(client, 'list_webhook_events', { since: 'last tuesday' }, 'invalid_argument')).toMatch(/since: must be an ISO-8601 time/);
    expect(await callError(client, 'list_webhook_events', { cursor: 'not-a-cursor' }, 'invalid_argument')).toMatch(/cursor/);
    const forged = Buffer.from(JSON.stringify(['yesterday', 1])).toString('base64url');
    expect(await callError(client, 'list_webhook_events', { cursor: forged }, 'invalid_argument')).toMatch(/cursor/);
    expect(await callError(client, 'list_webhook_events', { provder: 'github' }, 'invalid_argument')).toMatch(/provder/);
  });

  it('pages with a cursor while events keep arriving: no duplicate, no gap, shared timestamps included', async () => {
    const { client } = await connect();
    // One tick → one group commit → one shared received_at for all of them.
    const first = await Promise.all(Array.from({ length: 120 }, () => t.sb.store.insertEvent(newEvent({ provider: 'bulk' }))));
    expect(new Set(first.map(({ event }) => event.received_at)).size).toBe(1);

    let inserting = true;
    const writer = (async () => {
      while (inserting) {
        await Promise.all([0, 1, 2].map(() => t.sb.store.insertEvent(newEvent({ provider: 'bulk' }))));
        await sleep(3);
      }
    })();

    const seen: number[] = [];
    let cursor: string | undefined;
    let topId: number | undefined;
    let pages = 0;
    do {
      const page = await callOk<{ events: { id: number }[]; next_cursor?: string }>(client, 'list_webhook_events', {
        provider: 'bulk',
        limit: 7,
        ...(cursor ? { cursor } : {}),
      });
      topId ??= page.events[0]!.id;
      seen.push(...page.events.map((event) => event.id));
      cursor = page.next_cursor;
      if (cursor) expect(page.events).toHaveLength(7);
      pages++;
    } while (cursor);
    inserting = false;
    await writer;

    expect(pages).toBeGreaterThan(17);
    expect(new Set(seen).size).toBe(seen.length);
    const everything = await t.sb.store.listEvents({ provider: 'bulk', limit: 200 });
    const expected: number[] = [];
    for (let page = everything; ; ) {
      expected.push(...page.items.map((event) => event.id).filter((id) => id <= topId!));
      if (!page.next_cursor) break;
      page = await t.sb.store.listEvents({ provider: 'bulk', limit: 200, cursor: page.next_cursor });
    }
    expect(seen).toEqual(expected);
    for (const { event } of first) expect(seen).toContain(event.id);
  });
});

describe('get_webhook_event', () => {
  it('returns the detail with sanitized headers and a UTF-8 payload as text', async () => {
    const { client } = await connect();
    const body = JSON.stringify({ greeting: 'héllo ✓', note: 'detail' });
    const id = await deliverOpen(body, { 'x-note': `contains ${GITHUB_SECRET} by mistake`, authorization: 'Bearer something' });
    const detail = await callOk<Record<string, unknown> & { headers: Record<string, string> }>(client, 'get_webhook_event', { id });
    expect(detail).toMatchObject({
      id,
      provider: 'homelab',
      trust_mode: 'open',
      verified: false,
      payload: body,
      payload_encoding: 'utf8',
      payload_size: Buffer.byteLength(body),
      content_type: 'application/json',
    });
    expect(detail.headers['x-note']).toBe('«redacted»');
    expect(detail.headers.authorization).toBe('«redacted»');
  });

  it('returns bytes that are not UTF-8 as base64', async () => {
    const { client } = await connect();
    const bytes = Uint8Array.from([0xff, 0x00, 0x80, 0x41, 0xc3]);
    const { event } = await t.sb.store.insertEvent(newEvent({ provider: 'binary', payload: bytes }));
    const detail = await callOk<{ payload: string; payload_encoding: string }>(client, 'get_webhook_event', { id: event.id });
    expect(detail).toMatchObject({ payload_encoding: 'base64', payload: Buffer.from(bytes).toString('base64') });
  });

  it('answers not_found for an unknown id and invalid_argument for a malformed one', async () => {
    const { client } = await connect();
    expect(await callError(client, 'get_webhook_event', { id: 987654321 }, 'not_found')).toMatch(/987654321/);
    await callError(client, 'get_webhook_event', { id: -3 }, 'invalid_argument');
    await callError(client, 'get_webhook_event', { id: 'seven' }, 'invalid_argument');
    await callError(client, 'get_webhook_event', {}, 'invalid_argument');
  });
});

describe('list_providers', () => {
  it('lists every provider with its trust and secret status, never a secret', async () => {
    const { client } = await connect();
    const { providers } = await callOk<{ providers: Record<string, unknown>[] }>(client, 'list_providers');
    expect(providers.map((provider) => provider.name)).toEqual(['github', 'stripe', 'dockerhub', 'inline', 'homelab', 'nosecret']);
    expect(providers.find((provider) => provider.name === 'github')).toMatchObject({
      family: 'webhook',
      trust_mode: 'signed',
      secret_status: 'configured',
      path: '/webhooks/github',
      status: 'listening',
    });
    expect(providers.find((provider) => provider.name === 'homelab')).toMatchObject({ trust_mode: 'open', secret_status: 'none-by-design' });
    expect(providers.find((provider) => provider.name === 'dockerhub')).toMatchObject({ trust_mode: 'token' });
    expect(providers.find((provider) => provider.name === 'nosecret')).toMatchObject({ secret_status: 'missing' });
  });
});

describe('replay_webhook_event', () => {
  it('replays to the target, re-signed, and reports the answer (a 500 is a result)', async () => {
    const { client } = await connect();
    const body = '{"ref":"refs/heads/replay"}';
    const id = await deliverGithub('push', body, 'replay-me-1');
    const ok = await callOk<Record<string, unknown>>(client, 'replay_webhook_event', { id, target_url: `${target.url}/ok` });
    expect(ok).toEqual({
      id: expect.any(Number),
      target_url: `${target.url}/ok`,
      delivered: true,
      resigned: true,
      payload_edited: false,
      response_status: 200,
      response_ms: expect.any(Number),
      response_headers: expect.objectContaining({ 'content-type': 'text/plain' }),
      response_body: 'thanks',
      response_body_encoding: 'utf8',
      response_body_truncated: false,
    });
    const sent = target.received.at(-1)!;
    expect(sent.body).toBe(body);
    expect(sent.headers['x-hub-signature-256']).toBe(await githubSign(GITHUB_SECRET, body));

    const failing = await callOk<Record<string, unknown>>(client, 'replay_webhook_event', { id, target_url: `${target.url}/fail` });
    expect(failing).toMatchObject({ delivered: true, response_status: 500, response_body: 'boom' });

    const history = await t.sb.replays.history(id);
    expect(history.map((replay) => [replay.id, replay.requested_by])).toEqual([
      [failing.id, 'mcp'],
      [ok.id, 'mcp'],
    ]);
  });

  it('answers replay_failed when the target does not answer', async () => {
    const { client } = await connect();
    const id = await deliverOpen('{"replay":"refused"}');
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const message = await callError(client, 'replay_webhook_event', { id, target_url: `http://127.0.0.1:${port}/gone` }, 'replay_failed');
    expect(message).toContain(`127.0.0.1:${port}`);
    expect((await t.sb.replays.history(id))[0]).toMatchObject({ delivered: false, requested_by: 'mcp' });
  });

  it('answers not_found and invalid_argument without sending anything', async () => {
    const { client } = await connect();
    const before = target.received.length;
    const id = await deliverOpen('{"replay":"refused"}');
    await callError(client, 'replay_webhook_event', { id: 987654321, target_url: `${target.url}/ok` }, 'not_found');
    await callError(client, 'replay_webhook_event', { id }, 'invalid_argument'); // no target and no default_target
    await callError(client, 'replay_webhook_event', { id, target_url: 'http://example.com/hook' }, 'invalid_argument');
    await callError(client, 'replay_webhook_event', { id, target_url: 'http://169.254.169.254/latest' }, 'invalid_argument');
    await callError(client, 'replay_webhook_event', { id, target_url: 'file:///etc/passwd' }, 'invalid_argument');
    expect(target.received.length).toBe(before);
  });

  it('rate-limits replays per token: a new session does not get a new burst', async () => {
    // Its own endpoint with a clock that never moves, so no refill can blur the count.
    const sessions = new McpSessions(mcpDeps(t.sb), { rateLimits: new KeyedRateLimits({ capacity: 5, refillPerSecond: 0.5, now: () => 0 }) });
    t.sb.control.mount('/mcp-rate-test', sessions.handle);
    try {
      const id = await deliverOpen('{"replay":"burst"}');
      const { client } = await connect('/mcp-rate-test');
      // Refused calls cost nothing: only replays that would be sent count.
      await callError(client, 'replay_webhook_event', { id: 987654321, target_url: `${target.url}/ok` }, 'not_found');
      await callError(client, 'replay_webhook_event', { id, target_url: 'http://example.com/hook' }, 'invalid_argument');
      for (let attempt = 0; attempt < 5; attempt++) await callOk(client, 'replay_webhook_event', { id, target_url: `${target.url}/ok` });
      expect(await callError(client, 'replay_webhook_event', { id, target_url: `${target.url}/ok` }, 'rate_limited')).toMatch(/try again in \d+ s/);
      for (let n = 0; n < 3; n++) {
        const { client: other } = await connect('/mcp-rate-test');
        expect(await callError(other, 'replay_webhook_event', { id, target_url: `${target.url}/ok` }, 'rate_limited')).toMatch(/this token/);
      }
    } finally {
      await sessions.close();
    }
  });
});

describe('wait_for_webhook_event', () => {
  /** Whatever a test waited for, nothing may keep listening on the bus afterwards. */
  let listenersBefore = 0;
  beforeEach(() => {
    listenersBefore = t.sb.bus.listenerCount('event');
  });
  afterEach(async () => {
    await until(() => t.sb.bus.listenerCount('event') <= listenersBefore, 'bus listeners to be released');
  });

  it('answers at once with an already stored event after `after`', async () => {
    const { client } = await connect();
    const first = await deliverGithub('push', '{"n":1}', 'wait-stored-1');
    const second = await deliverGithub('push', '{"n":2}', 'wait-stored-2');
    const started = Date.now();
    const answer = await callOk<{ event: { id: number } }>(client, 'wait_for_webhook_event', { provider: 'github', event_type: 'push', after: first - 1, timeout_s: 30 });
    expect(answer.event.id).toBe(first);
    expect(Date.now() - started).toBeLessThan(5000);
    const next = await callOk<{ event: { id: number } }>(client, 'wait_for_webhook_event', { provider: 'github', after: first, timeout_s: 30 });
    expect(next.event.id).toBe(second);
  });

  it('resolves as soon as a matching event is stored', async () => {
    const { client } = await connect();
    const after = await t.sb.store.latestEventId();
    const waiting = callOk<{ event: { id: number; event_type: string } }>(client, 'wait_for_webhook_event', {
      provider: 'github',
      event_type: 'issues.opened',
      after,
      timeout_s: 30,
    });
    await sleep(300);
    await deliverOpen('{"not":"this one"}');
    await deliverGithub('push', '{"not":"this one either"}', 'wait-live-other');
    const id = await deliverGithub('issues', '{"action":"opened"}', 'wait-live-1');
    const answer = await waiting;
    expect(answer.event).toMatchObject({ id, provider: 'github', event_type: 'issues.opened', trust_mode: 'signed', verified: true });
  });

  it('answers {event: null} at the timeout', async () => {
    const { client } = await connect();
    const started = Date.now();
    const answer = await callOk<{ event: null }>(client, 'wait_for_webhook_event', { provider: 'github', event_type: 'never.happens', timeout_s: 0.4 });
    expect(answer).toEqual({ event: null });
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    await callError(client, 'wait_for_webhook_event', { timeout_s: 121 }, 'invalid_argument');
    await callError(client, 'wait_for_webhook_event', { after: -1 }, 'invalid_argument');
  });

  it('reports progress while it waits, to callers that asked for it', async () => {
    const { client } = await connect();
    const progress: number[] = [];
    const result = (await client.callTool({ name: 'wait_for_webhook_event', arguments: { event_type: 'never.happens', timeout_s: 5.6 } }, undefined, {
      onprogress: (update) => progress.push(update.progress),
      resetTimeoutOnProgress: true,
      timeout: 30_000,
    })) as CallToolResult;
    expect(result.structuredContent).toEqual({ event: null });
    expect(progress).toEqual([5]);
  });

  it('stops listening when the client cancels the call', async () => {
    const { client } = await connect();
    const before = t.sb.bus.listenerCount('event');
    const controller = new AbortController();
    const waiting = client.callTool({ name: 'wait_for_webhook_event', arguments: { timeout_s: 100 } }, undefined, { signal: controller.signal });
    await until(() => t.sb.bus.listenerCount('event') === before + 1, 'the wait to listen');
    controller.abort();
    await expect(waiting).rejects.toThrow();
    await until(() => t.sb.bus.listenerCount('event') === before, 'the wait to stop listening');
  });

  it('stops listening when the session is closed', async () => {
    const { client, transport } = await connect();
    const before = t.sb.bus.listenerCount('event');
    const waiting = client.callTool({ name: 'wait_for_webhook_event', arguments: { timeout_s: 100 } }).catch((error: Error) => error);
    await until(() => t.sb.bus.listenerCount('event') === before + 1, 'the wait to listen');
    await transport.terminateSession();
    await until(() => t.sb.bus.listenerCount('event') === before, 'the wait to stop listening');
    await client.close();
    await waiting;
  });

  it('stops listening when the HTTP connection drops without a goodbye', async () => {
    const init = await raw('POST', { ...AUTH, ...JSON_RPC }, initialize);
    const sessionId = init.headers['mcp-session-id'] as string;
    const headers = { ...AUTH, ...JSON_RPC, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
    await raw('POST', headers, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    const before = t.sb.bus.listenerCount('event');
    const url = new URL(t.sb.url.mcp);
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { host: url.host, ...headers } });
    req.on('error', () => {});
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'wait_for_webhook_event', arguments: { timeout_s: 100 } } }));
    await until(() => t.sb.bus.listenerCount('event') === before + 1, 'the wait to listen');
    req.destroy();
    await until(() => t.sb.bus.listenerCount('event') === before, 'the wait to stop listening');
    await raw('DELETE', { ...AUTH, 'mcp-session-id': sessionId });
  });
});

describe('resources', () => {
  it('lists recent events and the event template, and reads both', async () => {
    const { client } = await connect();
    const id = await deliverOpen('{"resource":"read"}');
    const { resources } = await client.listResources();
    expect(resources).toEqual([expect.objectContaining({ uri: 'switchboard://events/recent', mimeType: 'application/json' })]);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates).toEqual([expect.objectContaining({ uriTemplate: 'switchboard://events/{id}', mimeType: 'application/json' })]);

    const recent = await client.readResource({ uri: 'switchboard://events/recent' });
    outputs.push(recent);
    const { events } = JSON.parse(textOf(recent)) as { events: { id: number }[] };
    expect(events).toHaveLength(50);
    expect(events[0]!.id).toBe(await t.sb.store.latestEventId());
    expect(events.map((event) => event.id)).toContain(id);

    const one = await client.readResource({ uri: `switchboard://events/${id}` });
    outputs.push(one);
    expect(JSON.parse(textOf(one))).toMatchObject({ id, payload: '{"resource":"read"}', payload_encoding: 'utf8', trust_mode: 'open', verified: false });

    for (const uri of ['switchboard://events/987654321', 'switchboard://events/abc']) {
      const failure = await client.readResource({ uri }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(McpError);
      expect((failure as McpError).code).toBe(-32002);
    }
  });

  it('notifies subscribers of new events, one notification per burst, until they unsubscribe', async () => {
    const { client } = await connect();
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      updates.push(notification.params.uri);
    });
    await client.subscribeResource({ uri: 'switchboard://events/recent' });
    await deliverOpen('{"subscribed":1}');
    await until(() => updates.length === 1, 'the first update');
    expect(updates).toEqual(['switchboard://events/recent']);

    const started = Date.now();
    await Promise.all(Array.from({ length: 40 }, (_, index) => deliverOpen(`{"burst":${index}}`)));
    const windows = Math.ceil((Date.now() - started) / RESOURCE_UPDATE_COALESCE_MS) + 1;
    await sleep(RESOURCE_UPDATE_COALESCE_MS * 3);
    const burst = updates.length - 1;
    expect(burst).toBeGreaterThanOrEqual(1);
    // At most one per coalescing window, however many events the window held.
    expect(burst).toBeLessThanOrEqual(Math.min(windows, 20));

    // One group commit announcing 40 events in the same tick: exactly one notification.
    const before = updates.length;
    const stored = await Promise.all(Array.from({ length: 40 }, () => t.sb.store.insertEvent(newEvent({ provider: 'bulk-bus' }))));
    for (const { event } of stored) t.sb.bus.emit('event', event);
    await sleep(RESOURCE_UPDATE_COALESCE_MS * 3);
    expect(updates.length).toBe(before + 1);

    await client.unsubscribeResource({ uri: 'switchboard://events/recent' });
    const count = updates.length;
    await deliverOpen('{"after":"unsubscribe"}');
    await sleep(500);
    expect(updates.length).toBe(count);
  });

  it('accepts a subscription to any URI (only recent events ever change)', async () => {
    const { client } = await connect();
    await expect(client.subscribeResource({ uri: 'test://watched-resource' })).resolves.toEqual({});
    await expect(client.unsubscribeResource({ uri: 'test://watched-resource' })).resolves.toEqual({});
  });
});

describe('HTTP', () => {
  it('refuses a request without the bearer token (401)', async () => {
    expect((await raw('POST', JSON_RPC, initialize)).status).toBe(401);
    expect((await raw('POST', { ...JSON_RPC, authorization: 'Bearer wrong' }, initialize)).status).toBe(401);
    const client = new Client({ name: 'no-token', version: '1' });
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(t.sb.url.mcp)))).rejects.toThrow();
  });

  it('tells a wrong token from a missing one, and has no OAuth metadata to discover', async () => {
    const missing = await raw('POST', JSON_RPC, initialize);
    const wrong = await raw('POST', { ...JSON_RPC, authorization: 'Bearer stale-token-from-yesterday' }, initialize);
    expect(JSON.parse(missing.body)).toMatchObject({ reason: 'token_missing' });
    expect(JSON.parse(wrong.body)).toMatchObject({ reason: 'token_wrong', message: expect.stringMatching(/token is wrong/) });
    // What an MCP client fetches after a 401 to start an OAuth flow (RFC 9728, RFC 8414).
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource', '/.well-known/oauth-authorization-server']) {
      const response = await fetch(new URL(path, t.sb.url.control));
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toBe('application/json');
    }
    // The official client, given a wrong token, fails to connect with the 401 (no login attempted).
    const client = new Client({ name: 'wrong-token', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(t.sb.url.mcp), { requestInit: { headers: { authorization: 'Bearer stale' } } });
    await expect(client.connect(transport)).rejects.toThrow(/401|token is wrong/);
  });

  it('refuses a non-loopback Host and a foreign Origin (403), token or not', async () => {
    expect((await raw('POST', { ...AUTH, ...JSON_RPC, host: 'evil.example' }, initialize)).status).toBe(403);
    expect((await raw('POST', { ...AUTH, ...JSON_RPC, host: `evil.example:${new URL(t.sb.url.mcp).port}` }, initialize)).status).toBe(403);
    expect((await raw('POST', { ...AUTH, ...JSON_RPC, origin: 'http://evil.example' }, initialize)).status).toBe(403);
    expect((await raw('POST', { ...AUTH, ...JSON_RPC, origin: 'null' }, initialize)).status).toBe(403);
    const local = await raw('POST', { ...AUTH, ...JSON_RPC, origin: `http://localhost:${new URL(t.sb.url.mcp).port}` }, initialize);
    expect(local.status).toBe(200);
    await raw('DELETE', { ...AUTH, 'mcp-session-id': local.headers['mcp-session-id'] as string });
  });

  it('refuses a body over 1 MiB with 413, declared or streamed', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(1024 * 1024) } });
    const declared = await raw('POST', { ...AUTH, ...JSON_RPC, 'content-length': String(Buffer.byteLength(big)) }, big);
    expect(declared.status).toBe(413);
    const streamed = await raw('POST', { ...AUTH, ...JSON_RPC, 'transfer-encoding': 'chunked' }, big, true);
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body)).toMatchObject({ jsonrpc: '2.0', error: { message: expect.stringMatching(/1 MiB/) } });
    // Just under the limit is fine.
    const fits = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x'.repeat(1000 * 1000), version: '1' } } });
    const ok = await raw('POST', { ...AUTH, ...JSON_RPC }, fits);
    expect(ok.status).toBe(200);
    await raw('DELETE', { ...AUTH, 'mcp-session-id': ok.headers['mcp-session-id'] as string });
  });

  it('sends nosniff and no-store on every answer, event streams included', async () => {
    const init = await raw('POST', { ...AUTH, ...JSON_RPC }, initialize);
    expect(init.headers['content-type']).toMatch(/text\/event-stream/);
    const sessionId = init.headers['mcp-session-id'] as string;
    const answers = [
      init,
      await raw('POST', { ...AUTH, ...JSON_RPC }, '{"jsonrpc":"2.0","id":2,"method":"ping"}'), // no session: 400
      await raw('POST', { ...AUTH, ...JSON_RPC, 'mcp-session-id': 'no-such-session' }, '{"jsonrpc":"2.0","id":2,"method":"ping"}'), // 404
      await raw('POST', { ...AUTH, ...JSON_RPC }, '{not json'), // 400
      await raw('POST', JSON_RPC, initialize), // 401
      await raw('DELETE', { ...AUTH, 'mcp-session-id': sessionId }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 400, 404, 400, 401, 200]);
    for (const answer of answers) {
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
      expect(answer.headers['cache-control']).toBe('no-store');
    }
  });

  it('forgets a session on DELETE (404 afterwards)', async () => {
    const init = await raw('POST', { ...AUTH, ...JSON_RPC }, initialize);
    const sessionId = init.headers['mcp-session-id'] as string;
    const headers = { ...AUTH, ...JSON_RPC, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
    expect((await raw('POST', headers, '{"jsonrpc":"2.0","id":2,"method":"ping"}')).status).toBe(200);
    expect((await raw('DELETE', headers)).status).toBe(200);
    expect((await raw('POST', headers, '{"jsonrpc":"2.0","id":3,"method":"ping"}')).status).toBe(404);
  });
});

describe('sessions', () => {
  it('closes a session its client abandoned after the idle timeout, and on DELETE at once', async () => {
    const sessions = new McpSessions(mcpDeps(t.sb), {
      idleTimeoutMs: 300,
      rateLimits: new KeyedRateLimits({ capacity: 1, refillPerSecond: 1 }),
    });
    t.sb.control.mount('/mcp-idle-test', sessions.handle);
    try {
      const before = t.sb.bus.listenerCount('event');
      const abandoned = await connect('/mcp-idle-test');
      await abandoned.client.subscribeResource({ uri: 'switchboard://events/recent' });
      const deleted = await connect('/mcp-idle-test');
      expect(sessions.size).toBe(2);
      expect(t.sb.bus.listenerCount('event')).toBe(before + 1);

      await deleted.transport.terminateSession();
      expect(sessions.size).toBe(1);
      // Gone without a DELETE: its event stream closes, then it idles out.
      await abandoned.client.close();
      await until(() => sessions.size === 0, 'the idle session to be closed', 5000);
      expect(t.sb.bus.listenerCount('event')).toBe(before);
    } finally {
      await sessions.close();
    }
  });

  it('keeps a session with an open event stream', async () => {
    const sessions = new McpSessions(mcpDeps(t.sb), {
      idleTimeoutMs: 200,
      rateLimits: new KeyedRateLimits({ capacity: 1, refillPerSecond: 1 }),
    });
    t.sb.control.mount('/mcp-keep-test', sessions.handle);
    try {
      const { client } = await connect('/mcp-keep-test');
      await sleep(700);
      expect(sessions.size).toBe(1);
      await expect(client.ping()).resolves.toEqual({});
    } finally {
      await sessions.close();
    }
  });
});

describe('live sessions (the Connect screen’s count)', () => {
  it('counts a client while its event stream is open, not once it left without DELETE', async () => {
    const sessions = new McpSessions(mcpDeps(t.sb), { rateLimits: new KeyedRateLimits({ capacity: 1, refillPerSecond: 1 }) });
    t.sb.control.mount('/mcp-live-test', sessions.handle);
    try {
      const staying = await connect('/mcp-live-test');
      const leaving = await connect('/mcp-live-test');
      await until(() => sessions.liveCount === 2, 'both event streams to open');
      // The SDK client's close() sends no DELETE: the session stays open until it idles out,
      // but nobody is connected to it any more.
      await leaving.client.close();
      await until(() => sessions.liveCount === 1, 'the closed client to stop counting');
      expect(sessions.size).toBe(2);
      await staying.transport.terminateSession();
      await until(() => sessions.liveCount === 0 && sessions.size === 1, 'the DELETEd session to go');
    } finally {
      await sessions.close();
    }
  });

  it('counts a client without an event stream until it is idle', async () => {
    let clock = 1_000_000;
    const sessions = new McpSessions(mcpDeps(t.sb), {
      idleTimeoutMs: 60_000,
      now: () => clock,
      rateLimits: new KeyedRateLimits({ capacity: 1, refillPerSecond: 1 }),
    });
    t.sb.control.mount('/mcp-live-raw-test', sessions.handle);
    try {
      const answer = await fetch(new URL('/mcp-live-raw-test', t.sb.url.control), { method: 'POST', headers: { ...AUTH, ...JSON_RPC }, body: initialize });
      await answer.text();
      expect(answer.status).toBe(200);
      expect(sessions.liveCount).toBe(1);
      clock += 60_001;
      expect(sessions.liveCount).toBe(0);
    } finally {
      await sessions.close();
    }
  });

  it('reports live sessions in getServerInfo', async () => {
    const before = (await t.sb.api.getServerInfo({})).mcp_sessions!;
    const { client } = await connect();
    await until(() => t.sb.mcpSessionCount === before + 1, 'the new session to count');
    expect((await t.sb.api.getServerInfo({})).mcp_sessions).toBe(before + 1);
    await client.close();
    await until(() => t.sb.mcpSessionCount === before, 'the closed session to stop counting');
  });
});

describe('failures on switchboard’s side', () => {
  it('answers internal, without details, when the database is gone, and logs why', async () => {
    const sql = await openPglite('memory://');
    await migrate(sql, migrationsDir());
    const store = new EventStore(sql);
    await store.close();
    const logger = memoryLogger();
    const sessions = new McpSessions(
      { ...mcpDeps(t.sb), store, logger },
      { rateLimits: new KeyedRateLimits({ capacity: 1, refillPerSecond: 1 }) },
    );
    t.sb.control.mount('/mcp-db-down-test', sessions.handle);
    try {
      const { client } = await connect('/mcp-db-down-test');
      const message = await callError(client, 'list_webhook_events', {}, 'internal');
      expect(message).toBe('list_webhook_events failed with an internal error; the switchboard log has the details');
      expect(logger.lines.some((line) => line.startsWith('error mcp: list_webhook_events failed:'))).toBe(true);
    } finally {
      await sessions.close();
    }
  });

  it('scrubs a configured secret out of text it did not write (a queue’s last_error)', async () => {
    const password = 'redis-password-that-must-not-leak-77';
    const providers = new ProviderSet({}, t.sb.bus);
    providers.load(parseConfig({ providers: [{ name: 'jobs', kind: 'redis-stream', url: { value: `redis://:${password}@127.0.0.1:1` }, stream: 'jobs' }] }));
    providers.setRunStatus('jobs', { status: 'error', last_error: `connection to redis://:${password}@127.0.0.1:1 refused` });
    const sessions = new McpSessions({ ...mcpDeps(t.sb), providers }, { rateLimits: new KeyedRateLimits({ capacity: 1, refillPerSecond: 1 }) });
    t.sb.control.mount('/mcp-scrub-test', sessions.handle);
    try {
      const { client } = await connect('/mcp-scrub-test');
      const { providers: listed } = await callOk<{ providers: { last_error?: string }[] }>(client, 'list_providers');
      expect(listed[0]!.last_error).toMatch(/^connection to .*«redacted».* refused$/);
      expect(JSON.stringify(outputs)).not.toContain(password);
    } finally {
      await sessions.close();
    }
  });
});

describe('everything sent over MCP', () => {
  it('has trust_mode and verified on every event object', () => {
    const events: Record<string, unknown>[] = [];
    const visit = (value: unknown) => {
      if (typeof value === 'string' && value.startsWith('{')) {
        try {
          visit(JSON.parse(value));
        } catch {
          // not JSON text
        }
      } else if (Array.isArray(value)) {
        value.forEach(visit);
      } else if (value !== null && typeof value === 'object') {
        if ('payload_size' in value && 'received_at' in value) events.push(value as Record<string, unknown>);
        Object.values(value).forEach(visit);
      }
    };
    visit(outputs);
    expect(events.length).toBeGreaterThan(100);
    for (const event of events) {
      expect(event).toEqual(expect.objectContaining({ trust_mode: expect.any(String), verified: expect.any(Boolean) }));
    }
  });

  it('never contains a configured secret or the control token', () => {
    const text = JSON.stringify(outputs);
    expect(text.length).toBeGreaterThan(10_000);
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    for (const line of t.logger.lines) for (const secret of SECRETS) expect(line).not.toContain(secret);
  });
});
