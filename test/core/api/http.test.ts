import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { sign } from '@octokit/webhooks-methods';
import { readFile, stat, writeFile, mkdtemp } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactDatabaseUrl } from '../../../src/core/api/handlers.js';
import { API, LiveMessageSchema, type LiveMessage } from '../../../src/shared/api.js';
import { API_METHODS, type ApiMethod } from '../../../src/shared/api-methods.js';
import { startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../../helpers/core.js';

const GITHUB_SECRET = 'ui-typed-github-secret-4f1c9a';

let t: TestSwitchboard;
let configPath: string;
let consumer: Server;
let consumerUrl: string;
const consumed: { path: string; body: string; headers: Record<string, string | string[] | undefined> }[] = [];

async function api(method: string, input: unknown = {}, init: { token?: string | null; contentType?: string } = {}) {
  const headers: Record<string, string> = { 'content-type': init.contentType ?? 'application/json' };
  const token = init.token === undefined ? TEST_TOKEN : init.token;
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${t.sb.url.control}/api/${method}`, { method: 'POST', headers, body: JSON.stringify(input) });
  return { status: response.status, body: (await response.json()) as any };
}

/** Calls a method that must succeed, and checks its output against the contract. */
async function ok<M extends ApiMethod>(method: M, input: unknown = {}): Promise<any> {
  const { status, body } = await api(method, input);
  expect(status, JSON.stringify(body)).toBe(200);
  return API[method].output.parse(body);
}

/** Reads the SSE stream until `predicate` matches a message. */
async function nextLive(predicate: (message: LiveMessage) => boolean, trigger: () => Promise<unknown>): Promise<LiveMessage> {
  const controller = new AbortController();
  const response = await fetch(`${t.sb.url.control}/api/live`, { headers: { authorization: `Bearer ${TEST_TOKEN}` }, signal: controller.signal });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const found = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error('live stream ended');
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame.split('\n').find((line) => line.startsWith('data: '));
        if (!data) continue;
        const message = LiveMessageSchema.parse(JSON.parse(data.slice(6)));
        if (predicate(message)) return message;
      }
    }
  })();
  // Give the server a moment to subscribe before triggering.
  await new Promise((resolve) => setTimeout(resolve, 50));
  await trigger();
  try {
    return await found;
  } finally {
    controller.abort();
  }
}

beforeAll(async () => {
  consumer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      consumed.push({ path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
      res.writeHead(201, { 'content-type': 'application/json', 'x-consumer': 'yes' }).end('{"handled":true}');
    });
  });
  await new Promise<void>((resolve) => consumer.listen(0, '127.0.0.1', resolve));
  consumerUrl = `http://127.0.0.1:${(consumer.address() as AddressInfo).port}`;

  const dir = await mkdtemp(join(tmpdir(), 'switchboard-api-config-'));
  configPath = join(dir, 'config.json');
  // A hand-written file: edits through the API must keep its shape (no defaults filled in).
  await writeFile(
    configPath,
    JSON.stringify({ receiver: { port: 0 }, control: { port: 0 }, providers: [{ name: 'homelab', kind: 'open' }], retention: { max_rows: 1000 } }, null, 2),
  );
  t = await startTestSwitchboard({}, { config: undefined, configPath, env: { HOOK_TOKEN: 'env-token-value' } });
});

afterAll(async () => {
  await t?.close();
  await new Promise<void>((resolve) => consumer?.close(() => resolve()));
});

describe('the contract', () => {
  it('has a schema pair for every method', () => {
    expect(Object.keys(API).sort()).toEqual([...API_METHODS].sort());
  });

  it('redacts database passwords', () => {
    expect(redactDatabaseUrl('postgres://sb:hunter2@db.local:5432/events')).toBe('postgres://sb:«redacted»@db.local:5432/events');
    expect(redactDatabaseUrl('postgres://db.local/events?password=hunter2&sslmode=require')).toBe('postgres://db.local/events?password=«redacted»&sslmode=require');
    expect(redactDatabaseUrl('host=db password=hunter2')).toBe('«redacted»');
  });
});

describe('HTTP transport', () => {
  it('requires the bearer token, for calls and for the live stream', async () => {
    expect((await api('listEvents', {}, { token: null })).status).toBe(401);
    expect((await api('listEvents', {}, { token: 'wrong' })).status).toBe(401);
    const live = await fetch(`${t.sb.url.control}/api/live`);
    expect(live.status).toBe(401);
    await live.body?.cancel();
  });

  it('maps unknown methods, wrong verbs, wrong content types and bad input to clear errors', async () => {
    expect(await api('dropTables')).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    expect(await api('listEvents', {}, { contentType: 'text/plain' })).toMatchObject({ status: 415, body: { error: { code: 'invalid_argument' } } });
    const get = await fetch(`${t.sb.url.control}/api/listEvents`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
    expect(get.status).toBe(405);
    const bad = await api('listEvents', { limit: 5000 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_argument');
    expect(bad.body.error.message).toMatch(/limit/);
    expect((await api('listEvents', { cursor: 'not-a-cursor' })).body.error.code).toBe('invalid_argument');
    expect(await api('getEvent', { id: 999_999 })).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
  });
});

describe('events', () => {
  it('lists, filters, searches and shows one event with its payload and headers', async () => {
    await t.deliver('/webhooks/homelab', '{"type":"deploy.finished","service":"api-7731"}', { 'content-type': 'application/json', 'x-run': 'r1' });
    await t.deliver('/webhooks/homelab', Buffer.from([0xff, 0x00, 0xfe]), { 'content-type': 'application/octet-stream' });
    const all = await ok('listEvents');
    expect(all.events.length).toBeGreaterThanOrEqual(2);
    expect((await ok('listEvents', { search: 'api-7731' })).events).toHaveLength(1);
    expect((await ok('listEvents', { trust_mode: 'signed' })).events).toHaveLength(0);
    expect((await ok('listEvents', { provider: 'homelab', limit: 1 })).next_cursor).toBeTypeOf('string');

    const json = (await ok('listEvents', { search: 'api-7731' })).events[0];
    const detail = await ok('getEvent', { id: json.id });
    expect(detail.event).toMatchObject({ payload: '{"type":"deploy.finished","service":"api-7731"}', payload_encoding: 'utf8', trust_mode: 'open' });
    expect(detail.event.headers['x-run']).toBe('r1');
    expect(detail.replays).toEqual([]);

    const binary = all.events.find((event: any) => event.payload_size === 3);
    expect((await ok('getEvent', { id: binary.id })).event).toMatchObject({ payload: Buffer.from([0xff, 0x00, 0xfe]).toString('base64'), payload_encoding: 'base64' });
  });

  it('streams a new delivery to /api/live without polling', async () => {
    const message = await nextLive(
      (m) => m.type === 'event' && m.event.provider === 'homelab',
      () => t.deliver('/webhooks/homelab', '{"live":true}', { 'content-type': 'application/json' }),
    );
    expect(message).toMatchObject({ type: 'event', event: { provider: 'homelab', trust_mode: 'open' } });
  });

  it('replays to a local consumer and keeps the history', async () => {
    const { events } = await ok('listEvents', { search: 'api-7731' });
    const id = events[0].id;
    let replay: any;
    const live = await nextLive(
      (m) => m.type === 'replay' && m.replay.event_id === id,
      async () => {
        replay = await ok('replayEvent', { id, target_url: `${consumerUrl}/hooks`, headers: { 'x-extra': 'added' }, payload: '{"edited":true}' });
      },
    );
    expect(replay).toMatchObject({ event_id: id, delivered: true, response_status: 201, requested_by: 'api', response_body: '{"handled":true}', response_body_encoding: 'utf8' });
    // Without requested_by the replay is recorded as `api` (#26.10): the web UI says `ui` itself.
    expect(replay.response_headers['x-consumer']).toBe('yes');
    expect(live).toMatchObject({ type: 'replay', replay: { id: replay.id } });
    const last = consumed.at(-1)!;
    expect(last).toMatchObject({ path: '/hooks', body: '{"edited":true}' });
    expect(last.headers['x-extra']).toBe('added');
    expect((await ok('listReplays', { event_id: id })).replays[0]).toMatchObject({ id: replay.id });
    expect((await ok('getEvent', { id })).replays[0]).toMatchObject({ id: replay.id });
  });

  it('records who asked when the caller says (ui, api, cli), and refuses the core\'s own callers', async () => {
    const { events } = await ok('listEvents', { search: 'api-7731' });
    const replay = await ok('replayEvent', { id: events[0].id, target_url: `${consumerUrl}/hooks`, requested_by: 'cli' });
    expect(replay).toMatchObject({ requested_by: 'cli', delivered: true });
    const before = consumed.length;
    for (const forged of ['mcp', 'forward']) {
      const refused = await api('replayEvent', { id: events[0].id, target_url: `${consumerUrl}/hooks`, requested_by: forged });
      expect(refused.status).toBe(400);
      expect(refused.body.error.message).toMatch(/requested_by/);
    }
    expect(consumed.length).toBe(before);
  });

  it('refuses a replay without any target, making no request', async () => {
    const before = consumed.length;
    const { events } = await ok('listEvents', { limit: 1 });
    const refused = await api('replayEvent', { id: events[0].id });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('invalid_argument');
    expect(consumed.length).toBe(before);
  });
});

describe('live streams are capped (#22.13)', () => {
  const open = async (token: string) => {
    const controller = new AbortController();
    const response = await fetch(`${t.sb.url.control}/api/live`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
    return { response, close: () => controller.abort() };
  };

  it('per token and in all: 429 with Retry-After beyond, a slot again once one closes, and every open stream still gets each event', async () => {
    const { MAX_LIVE_STREAMS, MAX_LIVE_STREAMS_PER_TOKEN } = await import('../../../src/core/api/http.js');
    const first = await Promise.all(Array.from({ length: MAX_LIVE_STREAMS_PER_TOKEN }, () => open(TEST_TOKEN)));
    const rotated = 'a-second-control-token-for-the-live-cap-0123';
    try {
      expect(first.map(({ response }) => response.status)).toEqual(first.map(() => 200));
      const refused = await open(TEST_TOKEN);
      expect(refused.response.status).toBe(429);
      expect(refused.response.headers.get('retry-after')).toBe('5');
      expect(await refused.response.json()).toMatchObject({ error: { code: 'rate_limited', message: expect.stringMatching(/per token/) } });

      // A delivery with the cap reached reaches every open stream (and is acknowledged).
      const readers = first.map(({ response }) => response.body!.pipeThrough(new TextDecoderStream()).getReader());
      const delivered = await fetch(`${t.sb.url.receiver}/webhooks/homelab`, { method: 'POST', body: JSON.stringify({ type: 'live.cap', n: 1 }) });
      expect(delivered.status).toBe(200);
      const { id } = (await delivered.json()) as { id: number };
      await Promise.all(
        readers.map(async (reader) => {
          let text = '';
          while (!text.includes(`"id":${id},`)) text += (await reader.read()).value ?? '';
        }),
      );

      // Streams opened with another token (a rotated one) count toward the cap in all.
      t.sb.control.setToken(rotated);
      const second = await Promise.all(Array.from({ length: MAX_LIVE_STREAMS - MAX_LIVE_STREAMS_PER_TOKEN }, () => open(rotated)));
      expect(second.every(({ response }) => response.status === 200)).toBe(true);
      const beyond = await open(rotated);
      expect(beyond.response.status).toBe(429);
      expect(await beyond.response.json()).toMatchObject({ error: { message: expect.stringMatching(/in all/) } });
      second.forEach(({ close }) => close());
      t.sb.control.setToken(TEST_TOKEN);

      first[0]!.close();
      let again: Awaited<ReturnType<typeof open>> | undefined;
      for (let attempt = 0; attempt < 50; attempt++) {
        again = await open(TEST_TOKEN);
        if (again.response.status === 200) break;
        await again.response.body?.cancel();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(again!.response.status).toBe(200);
      again!.close();
    } finally {
      t.sb.control.setToken(TEST_TOKEN);
      first.forEach(({ close }) => close());
    }
  });
});

describe('providers', () => {
  it('adds a provider whose route answers at once; the typed secret never comes back', async () => {
    const added = await ok('addProvider', { provider: { name: 'github', kind: 'github', secrets: [{ value: GITHUB_SECRET }], forward_to: [] } });
    expect(added.provider).toMatchObject({ status: { name: 'github', trust_mode: 'signed', secret_status: 'configured', status: 'listening' }, config: { secrets: [{ source: 'value' }] } });
    expect(added.provider.receive_url).toBe(`${t.sb.url.receiver}/webhooks/github`);

    const body = '{"zen":"Design for failure.","hook_id":1}';
    const delivered = await t.deliver('/webhooks/github', body, {
      'content-type': 'application/json',
      'x-github-event': 'ping',
      'x-github-delivery': 'd-ui-1',
      'x-hub-signature-256': await sign(GITHUB_SECRET, body),
    });
    expect(delivered.status).toBe(200);

    const listed = await ok('listProviders');
    expect(listed.secret_storage).toBe('config-file');
    expect(JSON.stringify(listed)).not.toContain(GITHUB_SECRET);
    expect(JSON.stringify(await ok('getSettings'))).not.toContain(GITHUB_SECRET);

    // Headless: the value is written to config.json, which is private to the user.
    const file = JSON.parse(await readFile(configPath, 'utf8'));
    expect(file.providers[1]).toEqual({ name: 'github', kind: 'github', secrets: [{ value: GITHUB_SECRET }] });
    expect(file.retention).toEqual({ max_rows: 1000 });
    expect((await stat(configPath)).mode & 0o777).toBe(0o600);
  });

  it('lists a wrong-secret delivery as a rejection with its diagnosis', async () => {
    const body = '{"action":"opened"}';
    const refused = await t.deliver('/webhooks/github', body, {
      'content-type': 'application/json',
      'x-github-event': 'issues',
      'x-hub-signature-256': await sign('some other secret', body),
    });
    expect(refused.status).toBe(401);
    const { rejections } = await ok('listRejections', { provider: 'github' });
    expect(rejections[0]).toMatchObject({ provider: 'github', reason: expect.any(String) });
    expect(rejections[0].hint).toMatch(/secret/i);
  });

  it('edits a provider keeping its secret by index, and renames it', async () => {
    const updated = await ok('updateProvider', {
      name: 'github',
      provider: { name: 'gh', kind: 'github', secrets: [{ keep: 0 }, { env: 'GITHUB_NEXT_SECRET' }], tolerance_s: 120, forward_to: [`${consumerUrl}/forwarded`] },
    });
    expect(updated.provider.config).toMatchObject({
      name: 'gh',
      secrets: [{ source: 'value' }, { source: 'env', env: 'GITHUB_NEXT_SECRET', present: false }],
      forward_to: [`${consumerUrl}/forwarded`],
    });
    const file = JSON.parse(await readFile(configPath, 'utf8'));
    expect(file.providers[1].secrets).toEqual([{ value: GITHUB_SECRET }, { env: 'GITHUB_NEXT_SECRET' }]);
    expect((await t.deliver('/webhooks/github', '{}')).status).toBe(404);

    const bad = await api('updateProvider', { name: 'gh', provider: { name: 'gh', kind: 'github', secrets: [{ keep: 7 }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/secrets\[0\]/);
    const clash = await api('addProvider', { provider: { name: 'homelab', kind: 'open' } });
    expect(clash.body.error).toMatchObject({ code: 'invalid_argument', hint: expect.stringContaining('/webhooks/') });
    const invalid = await api('addProvider', { provider: { name: 'Bad Name', kind: 'open' } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.message).toMatch(/providers\[\d\]\.name/);
  });

  it('disables, re-enables and removes a provider', async () => {
    expect((await ok('setProviderEnabled', { name: 'homelab', enabled: false })).provider.status).toMatchObject({ enabled: false, status: 'disabled' });
    expect((await t.deliver('/webhooks/homelab', '{}')).status).toBe(404);
    expect(JSON.parse(await readFile(configPath, 'utf8')).providers[0]).toEqual({ name: 'homelab', kind: 'open', enabled: false });
    await ok('setProviderEnabled', { name: 'homelab', enabled: true });
    expect((await t.deliver('/webhooks/homelab', '{}')).status).toBe(200);

    await ok('addProvider', { provider: { name: 'dockerhub', kind: 'token', secrets: [{ env: 'HOOK_TOKEN' }] } });
    expect((await ok('listProviders')).providers.find((p: any) => p.status.name === 'dockerhub').config.secrets).toEqual([{ source: 'env', env: 'HOOK_TOKEN', present: true }]);
    expect(await ok('removeProvider', { name: 'dockerhub' })).toEqual({ removed: 'dockerhub' });
    expect((await api('removeProvider', { name: 'dockerhub' })).status).toBe(404);
  });

  it('refuses to edit a config.json broken by hand, and leaves the file as it is', async () => {
    const good = await readFile(configPath, 'utf8');
    const broken = '{ "providers": [ { "name": "homelab", "kind": "open" }, ] }';
    await writeFile(configPath, broken);
    try {
      for (const text of [broken, '["not", "an", "object"]']) {
        await writeFile(configPath, text);
        const answer = await api('addProvider', { provider: { name: 'later', kind: 'open' } });
        expect(answer.status).toBe(400);
        expect(answer.body.error).toMatchObject({ code: 'config_invalid', message: expect.stringContaining(configPath) });
        expect(await readFile(configPath, 'utf8')).toBe(text);
      }
      // Live reload keeps the last good configuration meanwhile.
      expect((await t.deliver('/webhooks/homelab', '{}')).status).toBe(200);
    } finally {
      await writeFile(configPath, good);
    }
  });
});

describe('settings, server info, clearing', () => {
  it('applies live settings and says which need a restart', async () => {
    const live = await ok('updateSettings', { retention: { max_age_days: 7 }, replay: { default_target: `${consumerUrl}/default`, resign: false } });
    expect(live.restart_required).toEqual([]);
    expect(live.settings.retention).toEqual({ max_age_days: 7, max_rows: 1000, max_rejections: 50_000 });
    expect(t.sb.config.replay.default_target).toBe(`${consumerUrl}/default`);

    const ports = await ok('updateSettings', { receiver: { port: 17_777 }, control: { port: 17_778 } });
    expect(ports.restart_required).toEqual(['receiver.port', 'control.port']);
    expect(ports.settings.running.receiver_port).toBe(Number(new URL(t.sb.url.receiver).port));
    const file = JSON.parse(await readFile(configPath, 'utf8'));
    expect(file.receiver).toEqual({ port: 17_777 });
    expect(file.replay).toEqual({ default_target: `${consumerUrl}/default`, resign: false });

    // The default target now makes a bare replay work.
    const { events } = await ok('listEvents', { provider: 'homelab', limit: 1 });
    expect(await ok('replayEvent', { id: events[0].id })).toMatchObject({ delivered: true, target_url: `${consumerUrl}/default` });

    const cleared = await ok('updateSettings', { replay: { default_target: null } });
    expect(cleared.settings.replay.default_target).toBeNull();
    expect(await api('updateSettings', { database: { url: 'postgres://u:«redacted»@h/db' } })).toMatchObject({ status: 400 });
    expect(await api('updateSettings', { retention: { max_rows: -1 } })).toMatchObject({ status: 400 });
  });

  it('gives the Connect screen the exact Claude Code line and a .mcp.json', async () => {
    const info = await ok('getServerInfo');
    expect(info.claude_command).toBe(`claude mcp add --transport http switchboard ${t.sb.url.mcp} --header "Authorization: Bearer ${TEST_TOKEN}"`);
    expect(JSON.parse(info.mcp_json)).toEqual({ mcpServers: { switchboard: { type: 'http', url: t.sb.url.mcp, headers: { Authorization: `Bearer ${TEST_TOKEN}` } } } });
    expect(info.mcp_url).toBe(t.sb.url.mcp);
    expect(info.mcp_sessions).toBe(0);
  });

  it('counts connected MCP sessions', async () => {
    const client = new Client({ name: 'api-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(t.sb.url.mcp), { requestInit: { headers: { authorization: `Bearer ${TEST_TOKEN}` } } });
    await client.connect(transport);
    try {
      expect((await ok('getServerInfo')).mcp_sessions).toBe(1);
    } finally {
      await transport.terminateSession();
      await client.close();
    }
    await expect.poll(async () => (await ok('getServerInfo')).mcp_sessions).toBe(0);
  });

  it('clears every event', async () => {
    expect(await ok('clearEvents')).toEqual({ cleared: true });
    expect((await ok('listEvents')).events).toEqual([]);
    expect((await ok('listRejections')).rejections).toEqual([]);
  });
});

describe('with the desktop vault', () => {
  let desktop: TestSwitchboard;
  const vaulted = new Map<string, string>();
  beforeAll(async () => {
    desktop = await startTestSwitchboard(
      {},
      {
        vault: {
          get: (id) => vaulted.get(id),
          put: (value) => {
            const id = `v${vaulted.size + 1}`;
            vaulted.set(id, value);
            return id;
          },
        },
      },
    );
  });
  afterAll(() => desktop?.close());

  it('keeps typed secrets in the vault, never in the config', async () => {
    const response = await fetch(`${desktop.sb.url.control}/api/addProvider`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_TOKEN}` },
      body: JSON.stringify({ provider: { name: 'github', kind: 'github', secrets: [{ value: GITHUB_SECRET }] } }),
    });
    const body = (await response.json()) as any;
    expect(response.status).toBe(200);
    expect(body.provider.config.secrets).toEqual([{ source: 'stored', present: true }]);
    expect(desktop.sb.config.providers[0]).toMatchObject({ secrets: [{ stored: 'v1' }] });
    expect(vaulted.get('v1')).toBe(GITHUB_SECRET);
    const body2 = '{"zen":"x"}';
    const delivered = await desktop.deliver('/webhooks/github', body2, { 'x-github-event': 'ping', 'x-hub-signature-256': await sign(GITHUB_SECRET, body2) });
    expect(delivered.status).toBe(200);
  });
});
