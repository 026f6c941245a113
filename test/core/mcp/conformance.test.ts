import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../../helpers/core.js';

/**
 * The MCP project's own conformance suite (@modelcontextprotocol/conformance 0.1.16), run as a
 * child process against a real switchboard. The suite cannot send a bearer token, so it talks to
 * a local pass-through proxy that adds `Authorization` and changes nothing else: Host and Origin
 * reach the control server as the suite sent them, so its DNS-rebinding probe meets the real
 * checks. On Node 20 the suite needs `fs.globSync` stubbed (conformance/fs-glob-sync.mjs).
 *
 * Scenarios that apply to switchboard. The others test fixtures a server must implement for the
 * suite (test_simple_text, test://static-text, prompts, completion, logging, elicitation,
 * sampling, SSE polling with an event store), which switchboard does not have.
 */
const SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'resources-list',
  'resources-subscribe',
  'resources-unsubscribe',
  'dns-rebinding-protection',
];

const CLI = fileURLToPath(new URL('../../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url));
const LOADER = fileURLToPath(new URL('./conformance/fs-glob-sync.mjs', import.meta.url));

let t: TestSwitchboard;
let proxy: Server;
let proxyUrl: string;
let outputDir: string;

beforeAll(async () => {
  t = await startTestSwitchboard({ providers: [{ name: 'homelab', kind: 'open' }] });
  await t.deliver('/webhooks/homelab', '{"conformance":true}', { 'content-type': 'application/json' });
  const control = new URL(t.sb.url.control);
  proxy = createServer((incoming, outgoing) => {
    const upstream = request(
      {
        host: control.hostname,
        port: control.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, authorization: `Bearer ${TEST_TOKEN}` },
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.on('error', () => outgoing.destroy());
    outgoing.on('close', () => upstream.destroy());
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
  outputDir = await mkdtemp(join(tmpdir(), 'switchboard-conformance-'));
});

afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
  await t?.close();
  if (outputDir) await rm(outputDir, { recursive: true, force: true });
});

function runScenario(scenario: string, dir: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', LOADER, CLI, 'server', '--url', proxyUrl, '--scenario', scenario, '-o', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

async function checksIn(dir: string): Promise<{ id: string; status: string; errorMessage?: string }[]> {
  const checks = [];
  for (const entry of await readdir(dir, { recursive: true })) {
    if (entry.endsWith('checks.json')) checks.push(...JSON.parse(await readFile(join(dir, entry), 'utf8')));
  }
  return checks;
}

describe('MCP conformance suite (server scenarios that apply)', () => {
  it.each(SCENARIOS)('%s passes', async (scenario) => {
    const dir = join(outputDir, scenario);
    const { code, output } = await runScenario(scenario, dir);
    const checks = await checksIn(dir);
    expect(checks.length, output).toBeGreaterThan(0);
    const failed = checks.filter((check) => check.status !== 'SUCCESS' && check.status !== 'INFO');
    expect(failed, output).toEqual([]);
    expect(checks.some((check) => check.status === 'SUCCESS'), output).toBe(true);
    expect(code, output).toBe(0);
  });
});
