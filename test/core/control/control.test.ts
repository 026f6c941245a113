import { request } from 'node:http';
import { connect } from 'node:net';
import { mkdtemp, mkdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateToken } from '../../../src/core/control/auth.js';
import { sendJson } from '../../../src/core/control/server.js';
import { startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../../helpers/core.js';

let t: TestSwitchboard;
let uiDir: string;

/** A raw request, so tests can send any Host header (fetch forbids setting it). */
function raw(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const url = new URL(t.sb.url.control);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  uiDir = await mkdtemp(join(tmpdir(), 'switchboard-ui-'));
  await mkdir(join(uiDir, 'assets'));
  await writeFile(join(uiDir, 'index.html'), '<!doctype html><title>ui</title>');
  await writeFile(join(uiDir, 'assets', 'app.js'), 'console.log(1)');
  await writeFile(join(tmpdir(), 'switchboard-outside.txt'), 'outside');
  t = await startTestSwitchboard({}, { rendererDir: uiDir });
  t.sb.control.mount('/probe', (_req, res) => sendJson(res, 200, { ok: true }));
});
afterAll(() => t?.close());

describe('control port', () => {
  it('answers /healthz', async () => {
    const response = await raw('/healthz', { host: new URL(t.sb.url.control).host });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ status: 'ok' });
  });

  it('requires the bearer token on mounted routes', async () => {
    const host = new URL(t.sb.url.control).host;
    const without = await raw('/probe/anything', { host });
    expect(without.status).toBe(401);
    expect(without.headers['www-authenticate']).toMatch(/^Bearer/);
    expect((await raw('/probe/anything', { host, authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await raw('/probe/anything', { host, authorization: `Bearer ${TEST_TOKEN}` })).status).toBe(200);
  });

  it('says whether the bearer token was missing, malformed or wrong', async () => {
    const host = new URL(t.sb.url.control).host;
    const cases: [Record<string, string>, string, RegExp][] = [
      [{}, 'token_missing', /no bearer token was sent/],
      [{ authorization: '' }, 'token_missing', /no bearer token was sent/],
      [{ authorization: 'Basic dXNlcjpwYXNz' }, 'token_malformed', /not "Bearer <token>"/],
      [{ authorization: 'Bearer' }, 'token_malformed', /not "Bearer <token>"/],
      [{ authorization: 'Bearer wrong-token' }, 'token_wrong', /token is wrong/],
      [{ authorization: `Bearer ${TEST_TOKEN}x` }, 'token_wrong', /token is wrong/],
    ];
    for (const [headers, reason, message] of cases) {
      const answer = await raw('/probe/anything', { host, ...headers });
      expect(answer.status).toBe(401);
      const body = JSON.parse(answer.body);
      expect(body).toMatchObject({ error: 'unauthorized', reason });
      expect(body.message).toMatch(message);
      expect(answer.headers['www-authenticate']).toMatch(reason === 'token_missing' ? /^Bearer realm="switchboard"$/ : /error="invalid_token"/);
    }
  });

  it('answers /.well-known/* with 404 JSON, never the UI, token or not', async () => {
    const host = new URL(t.sb.url.control).host;
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-authorization-server', '/.well-known/openid-configuration', '/.well-known', '/.well-known/']) {
      for (const headers of [{ host }, { host, authorization: `Bearer ${TEST_TOKEN}` }] as Record<string, string>[]) {
        const answer = await raw(path, headers);
        expect({ path, status: answer.status, type: answer.headers['content-type'] }).toEqual({ path, status: 404, type: 'application/json' });
        expect(JSON.parse(answer.body)).toMatchObject({ error: 'not_found', message: expect.stringMatching(/no OAuth/) });
      }
    }
  });

  it('refuses a non-loopback Host (DNS rebinding) even with the token', async () => {
    for (const host of ['evil.example', 'evil.example:7778', '127.0.0.1.nip.io', '192.168.1.5:7778']) {
      const response = await raw('/probe/anything', { host, authorization: `Bearer ${TEST_TOKEN}` });
      expect(response.status, host).toBe(403);
    }
    for (const host of ['localhost:1', '127.0.0.1', '[::1]:7778']) {
      expect((await raw('/healthz', { host })).status, host).toBe(200);
    }
  });

  it('parses Host strictly: one loopback name or literal, an optional numeric port, nothing else', async () => {
    const port = new URL(t.sb.url.control).port;
    const refused = [
      `127.0.0.1:${port}@evil.example`, '[::1].evil.example', `[::1].evil:${port}`, '127.0.0.1:evil', `127.0.0.1:${port}:1`,
      'localhost.', `localhost.:${port}`, 'localhost.evil.example', 'evil.localhost', '127.1', '2130706433', '0x7f.0.0.1',
      '127.000.000.001', '127.0.0.256', '127.0.0.1.', '[::ffff:127.0.0.1]', '[::2]', '[::1', '::1', 'user@localhost',
      `localhost:${port}/x`, 'localhost:0', 'localhost:65536', 'localhost:', ' ', 'localhost evil', '128.0.0.1', '0.0.0.0',
    ];
    for (const host of refused) {
      expect({ host, status: (await raw('/healthz', { host })).status }).toEqual({ host, status: 403 });
    }
    const accepted = ['localhost', `localhost:${port}`, 'LOCALHOST', `LocalHost:${port}`, '127.0.0.1', `127.0.0.1:${port}`, '127.5.6.7', '[::1]', `[::1]:${port}`, '[0:0:0:0:0:0:0:1]'];
    for (const host of accepted) {
      expect({ host, status: (await raw('/healthz', { host })).status }).toEqual({ host, status: 200 });
    }
  });

  it('refuses an empty Host and duplicate Host or Origin headers', async () => {
    const host = new URL(t.sb.url.control).host;
    const send = (lines: string[]) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(new URL(t.sb.url.control).port), '127.0.0.1');
        let answer = '';
        socket.on('data', (chunk) => (answer += chunk.toString()));
        socket.on('end', () => resolve(answer.split('\r\n')[0]!));
        socket.on('error', reject);
        socket.end(`GET /healthz HTTP/1.1\r\n${lines.join('\r\n')}\r\nConnection: close\r\n\r\n`);
      });
    expect(await send([`Host: ${host}`])).toMatch(/ 200 /);
    expect(await send(['Host: '])).toMatch(/ 40[03] /);
    expect(await send([`Host: ${host}`, 'Host: evil.example'])).toMatch(/ 40[03] /);
    expect(await send([`Host: ${host}`, `Host: ${host}`])).toMatch(/ 40[03] /);
    expect(await send([`Host: ${host}`, `Origin: http://${host}`, 'Origin: https://evil.example'])).toMatch(/ 403 /);
  });

  it('parses Origin as strictly as Host', async () => {
    const host = new URL(t.sb.url.control).host;
    const port = new URL(t.sb.url.control).port;
    for (const origin of [
      `http://127.0.0.1:${port}@evil.example`, 'http://[::1].evil.example', 'http://127.0.0.1:evil', 'http://localhost.', `http://${host}/`,
      `http://${host}/path`, 'http://127.1', 'http://2130706433', 'file://', 'null', '', `ftp://${host}`, `http://user@${host}`,
    ]) {
      expect({ origin, status: (await raw('/healthz', { host, origin })).status }).toEqual({ origin, status: 403 });
    }
    for (const origin of [`http://${host}`, 'http://localhost', `https://localhost:${port}`, 'http://[::1]:5173', 'HTTP://LOCALHOST:1']) {
      expect({ origin, status: (await raw('/healthz', { host, origin })).status }).toEqual({ origin, status: 200 });
    }
  });

  it('refuses a foreign Origin and accepts a loopback one', async () => {
    const host = new URL(t.sb.url.control).host;
    const auth = { host, authorization: `Bearer ${TEST_TOKEN}` };
    expect((await raw('/probe/x', { ...auth, origin: 'https://evil.example' })).status).toBe(403);
    expect((await raw('/probe/x', { ...auth, origin: 'null' })).status).toBe(403);
    expect((await raw('/probe/x', { ...auth, origin: `http://${host}` })).status).toBe(200);
  });

  it('serves the web UI with a strict CSP and never a file outside it', async () => {
    const host = new URL(t.sb.url.control).host;
    const index = await raw('/', { host });
    expect(index.status).toBe(200);
    expect(index.headers['content-security-policy']).toMatch(/script-src 'self'/);
    expect((await raw('/assets/app.js', { host })).body).toBe('console.log(1)');
    expect((await raw('/some/client/route', { host })).body).toContain('<title>ui</title>');
    const traversal = await raw('/..%2fswitchboard-outside.txt', { host });
    expect(traversal.body).not.toContain('outside');
    const dotted = await raw('/../switchboard-outside.txt', { host });
    expect(dotted.body).not.toContain('outside');
  });
});

describe('control token', () => {
  it('is generated once into a 0600 file and reused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchboard-token-'));
    const first = await loadOrCreateToken(dir);
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect((await stat(join(dir, 'control-token'))).mode & 0o777).toBe(0o600);
    expect(await loadOrCreateToken(dir)).toBe(first);
  });
});
