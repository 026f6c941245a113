import { mkdtemp, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../../helpers/core.js';

/**
 * Bad input is the caller's fault: 400 / invalid_argument, never a 500 / internal (which is for
 * our own failures). Covers the UI API, the MCP tools and the control port's own routing.
 */

let t: TestSwitchboard;
let mcp: Client;

beforeAll(async () => {
  // A built UI to serve, so static paths get as far as the file lookup.
  const rendererDir = await mkdtemp(join(tmpdir(), 'switchboard-ui-'));
  await writeFile(join(rendererDir, 'index.html'), '<!doctype html><title>ui</title>');
  t = await startTestSwitchboard({ providers: [{ name: 'homelab', kind: 'open' }] }, { rendererDir });
  await t.deliver('/webhooks/homelab', '{"type":"seed"}', { 'content-type': 'application/json' });
  mcp = new Client({ name: 'input-validation-test', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', t.sb.url.control), { requestInit: { headers: { authorization: `Bearer ${TEST_TOKEN}` } } }),
  );
});
afterAll(async () => {
  await mcp?.close().catch(() => {});
  await t?.close();
});

async function api(method: string, input: unknown) {
  const response = await fetch(`${t.sb.url.control}/api/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_TOKEN}` },
    body: JSON.stringify(input),
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function tool(name: string, args: Record<string, unknown>) {
  const result = (await mcp.callTool({ name, arguments: args })) as CallToolResult;
  return { isError: result.isError === true, structured: result.structuredContent as any };
}

const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Cursors shaped like ours whose contents PostgreSQL could not read. */
const FORGED_CURSORS = [
  cursorOf(['2026-13-45T99:99:99.000000Z', 1]),
  cursorOf(['2026-02-30T00:00:00.000000Z', 1]),
  cursorOf(['2026-01-01T24:00:00.000000Z', 1]),
  cursorOf(['0000-01-01T00:00:00.000000Z', 1]),
  cursorOf(['2026-01-01T00:00:00.000000Z', 2 ** 63]),
  cursorOf(['2026-01-01T00:00:00.000000Z', -1]),
  cursorOf(['2026-01-01T00:00:00.000000Z\u0000', 1]),
  'not base64 at all!',
  'x'.repeat(10_000),
];

/** Text no filter can hold: NUL, unpaired surrogates, absurd lengths. */
const BAD_TEXT = ['x\u0000', '\u0000', '\ud800', 'a\udc00b', 'y'.repeat(100_000)];

describe('UI API: 400 invalid_argument, never 500', () => {
  it('refuses forged cursors', async () => {
    for (const cursor of FORGED_CURSORS) {
      for (const method of ['listEvents', 'listRejections']) {
        const answer = await api(method, { cursor });
        expect({ method, cursor: cursor.slice(0, 60), status: answer.status, code: answer.body.error?.code }).toEqual({
          method,
          cursor: cursor.slice(0, 60),
          status: 400,
          code: 'invalid_argument',
        });
      }
    }
  });

  it('refuses NUL, lone surrogates and absurd lengths in every filter and name', async () => {
    const inputs = (bad: string): [string, unknown][] => [
      ['listEvents', { search: bad }],
      ['listEvents', { event_type: bad }],
      ['listEvents', { provider: bad }],
      ['listEvents', { external_id: bad }],
      ['listRejections', { provider: bad }],
      ['replayEvent', { id: 1, target_url: bad }],
      ['replayEvent', { id: 1, target_url: 'http://127.0.0.1:9/', headers: { 'x-a': bad } }],
      ['removeProvider', { name: bad }],
      ['setProviderEnabled', { name: bad, enabled: true }],
      ['addProvider', { provider: { name: bad, kind: 'open' } }],
      ['addProvider', { provider: { name: 'fine', kind: 'github', secrets: [{ env: bad }] } }],
      ['updateSettings', { replay: { default_target: bad } }],
      ['updateSettings', { replay: { allow_hosts: [bad] } }],
      ['updateSettings', { receiver: { public_url: bad } }],
    ];
    for (const bad of BAD_TEXT) {
      for (const [method, input] of inputs(bad)) {
        const answer = await api(method, input);
        expect({ method, input: JSON.stringify(input).slice(0, 80), status: answer.status }).toEqual({
          method,
          input: JSON.stringify(input).slice(0, 80),
          status: 400,
        });
        expect(answer.body.error.code).toBe('invalid_argument');
      }
    }
  });

  it('refuses ids beyond a safe integer (and bigint), negative and fractional ids', async () => {
    for (const id of [2 ** 63, 1e300, -1, 0, 1.5, '1']) {
      for (const method of ['getEvent', 'listReplays']) {
        const input = method === 'getEvent' ? { id } : { event_id: id };
        const answer = await api(method, input);
        expect({ method, id, status: answer.status }).toEqual({ method, id, status: 400 });
      }
    }
    // 1e400 is Infinity once parsed: sent as raw JSON text.
    const response = await fetch(`${t.sb.url.control}/api/getEvent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_TOKEN}` },
      body: '{"id": 1e400}',
    });
    expect(response.status).toBe(400);
  });

  it('still answers good filters', async () => {
    const answer = await api('listEvents', { search: 'seed', event_type: 'seed', provider: 'homelab' });
    expect(answer.status).toBe(200);
    expect(answer.body.events).toHaveLength(1);
    // Paired surrogates (an emoji) are fine.
    expect((await api('listEvents', { search: '🦊' })).status).toBe(200);
  });
});

describe('MCP tools: invalid_argument, never internal', () => {
  it('refuses forged cursors', async () => {
    for (const cursor of FORGED_CURSORS) {
      const answer = await tool('list_webhook_events', { cursor });
      expect({ cursor: cursor.slice(0, 60), answer }).toEqual({
        cursor: cursor.slice(0, 60),
        answer: { isError: true, structured: { code: 'invalid_argument', message: expect.any(String) } },
      });
    }
  });

  it('refuses NUL, lone surrogates and absurd lengths in filters', async () => {
    for (const bad of BAD_TEXT) {
      for (const [name, args] of [
        ['list_webhook_events', { provider: bad }],
        ['list_webhook_events', { event_type: bad }],
        ['list_webhook_events', { since: bad }],
        ['wait_for_webhook_event', { provider: bad, timeout_s: 0 }],
        ['wait_for_webhook_event', { event_type: bad, timeout_s: 0 }],
      ] as const) {
        const answer = await tool(name, args);
        expect({ name, args: JSON.stringify(args).slice(0, 60), code: answer.structured?.code }).toEqual({
          name,
          args: JSON.stringify(args).slice(0, 60),
          code: 'invalid_argument',
        });
      }
    }
  });

  it('refuses times PostgreSQL cannot hold and ids beyond a safe integer', async () => {
    for (const since of ['0000-01-01T00:00:00Z', '0000-01-01', '2026-02-30', '2026-13-01T00:00:00Z', '2026-01-01T25:00:00Z']) {
      expect((await tool('list_webhook_events', { since })).structured.code).toBe('invalid_argument');
    }
    for (const id of [2 ** 63, -1, 1.5]) {
      expect((await tool('get_webhook_event', { id })).structured.code).toBe('invalid_argument');
      expect((await tool('replay_webhook_event', { id })).structured.code).toBe('invalid_argument');
    }
    const longUrl = `http://127.0.0.1:9/${'y'.repeat(100_000)}`;
    expect((await tool('replay_webhook_event', { id: 1, target_url: longUrl })).structured.code).toBe('invalid_argument');
    expect((await tool('list_webhook_events', { since: '0001-01-01T00:00:00Z' })).isError).toBe(false);
  });
});

/** A raw request, so the target and Host can be anything (fetch would normalize them). */
function raw(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', headers: { host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('request targets and paths', () => {
  const controlPort = () => Number(new URL(t.sb.url.control).port);
  const receiverPort = () => Number(new URL(t.sb.url.receiver).port);

  it('control port: a broken percent-encoding or an encoded NUL on a static path is a 400', async () => {
    for (const path of ['/%E0%A4%A', '/%', '/%zz', '/assets/%C0%80', '/%00', '/a%00.js']) {
      const answer = await raw(controlPort(), path);
      expect({ path, status: answer.status }).toEqual({ path, status: 400 });
      expect(JSON.parse(answer.body).error).toBe('invalid_argument');
    }
  });

  it('both ports: odd request targets ("//", "//host/…", "*") get a clear answer, never a 500', async () => {
    for (const port of [controlPort(), receiverPort()]) {
      for (const path of ['//', '//[::1', '//evil.example/webhooks/homelab', '*', 'webhooks/homelab']) {
        const answer = await raw(port, path);
        // "//…" is an (odd) path like any other: no route on the receiver, the UI on the control
        // port; a target that is not a path at all is a 400.
        const expected = !path.startsWith('/') ? 400 : port === receiverPort() ? 404 : 200;
        expect({ port, path, status: answer.status }).toEqual({ port, path, status: expected });
      }
    }
  });

  it('receiver: a broken percent-encoding or NUL in the provider name is a 404', async () => {
    for (const path of ['/webhooks/%E0%A4%A', '/webhooks/home%00lab']) {
      const response = await fetch(`${t.sb.url.receiver}${path}`, { method: 'POST', body: '{}' });
      expect(response.status).toBe(404);
    }
  });
});
