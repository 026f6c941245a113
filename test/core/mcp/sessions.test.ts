import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_MCP_SESSIONS } from '../../../src/core/mcp/sessions.js';
import { startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../../helpers/core.js';

/**
 * The live-session cap on the real /mcp endpoint: a flood of initializes cannot grow memory
 * without bound; the longest-idle session makes room; when every one is busy, a clear 503.
 */

let t: TestSwitchboard;

beforeAll(async () => {
  t = await startTestSwitchboard({});
});
afterAll(() => t?.close());

const HEADERS = { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'flood', version: '1' } },
});
const PING = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' });

function post(body: string, sessionId?: string): Promise<{ status: number; headers: IncomingMessage['headers']; body: string }> {
  const url = new URL(t.sb.url.mcp);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { host: url.host, ...HEADERS, ...(sessionId ? { 'mcp-session-id': sessionId } : {}) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function openSession(): Promise<string> {
  const answer = await post(INITIALIZE);
  expect(answer.status).toBe(200);
  return answer.headers['mcp-session-id'] as string;
}

/** Opens the session's GET event stream and keeps it open (a session with one is busy). */
function holdStream(sessionId: string): Promise<ClientRequest> {
  const url = new URL(t.sb.url.mcp);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'GET', headers: { host: url.host, ...HEADERS, accept: 'text/event-stream', 'mcp-session-id': sessionId } },
      (res) => {
        expect(res.statusCode).toBe(200);
        resolve(req);
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? undefined : reject(error)));
    req.end();
  });
}

async function liveSessions(): Promise<number> {
  const response = await fetch(`${t.sb.url.control}/api/getServerInfo`, { method: 'POST', headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' }, body: '{}' });
  return ((await response.json()) as { mcp_sessions: number }).mcp_sessions;
}

describe('live MCP sessions are capped', () => {
  it(`keeps at most ${MAX_MCP_SESSIONS}, closing the longest-idle one to admit a new one`, async () => {
    const ids: string[] = [];
    for (let n = 0; n < MAX_MCP_SESSIONS; n++) ids.push(await openSession());
    // Touch every session but the second, so the second is now the longest idle.
    for (const id of ids.filter((_, index) => index !== 1)) expect((await post(PING, id)).status).toBe(200);
    expect(await liveSessions()).toBe(MAX_MCP_SESSIONS);

    // A flood: every new session evicts an idle one, the count never grows.
    const flood: string[] = [];
    for (let n = 0; n < MAX_MCP_SESSIONS + 10; n++) flood.push(await openSession());
    expect(await liveSessions()).toBe(MAX_MCP_SESSIONS);
    // The longest idle went first: the second session, then the others in the order they were used.
    expect((await post(PING, ids[1])).status).toBe(404);
    expect((await post(PING, ids[0])).status).toBe(404);
    expect((await post(PING, flood.at(-1))).status).toBe(200);
    for (const id of flood) await fetch(t.sb.url.mcp, { method: 'DELETE', headers: { ...HEADERS, 'mcp-session-id': id } });
  });

  it('refuses a new session with a clear 503 when every live one is busy, and admits it once one is idle', async () => {
    while ((await liveSessions()) < MAX_MCP_SESSIONS) await openSession();
    const streams: ClientRequest[] = [];
    try {
      // Whatever sessions are live, give each an open event stream.
      const ids: string[] = [];
      for (let n = 0; n < MAX_MCP_SESSIONS; n++) {
        const id = await openSession(); // evicts an idle one while some remain idle
        ids.push(id);
        streams.push(await holdStream(id));
      }
      const refused = await post(INITIALIZE);
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('5');
      expect(JSON.parse(refused.body)).toMatchObject({ jsonrpc: '2.0', error: { message: expect.stringMatching(/too many MCP sessions: all 32 are busy/) } });
      expect(await liveSessions()).toBe(MAX_MCP_SESSIONS);
      // Busy sessions were not touched.
      expect((await post(PING, ids[0])).status).toBe(200);

      streams.shift()!.destroy();
      const start = Date.now();
      let admitted = await post(INITIALIZE);
      while (admitted.status === 503 && Date.now() - start < 5000) admitted = await post(INITIALIZE);
      expect(admitted.status).toBe(200);
      expect((await post(PING, ids[0])).status).toBe(404);
    } finally {
      for (const stream of streams) stream.destroy();
    }
  });
});
