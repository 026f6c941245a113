import { sign } from '@octokit/webhooks-methods';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAM_LINES_PER_TICK } from '../../src/cli/stream.js';
import { spawnServe, waitForOutput, type Serve } from '../helpers/cli.js';
import { startConsumer, type Consumer } from '../core/replay/consumer.js';

/** `switchboard serve`'s terminal stream (DESIGN §13), read from the real binary's stdout (a pipe: no colour). */

const SECRET = 'stream-test-secret';
let dir: string;
let consumer: Consumer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchboard-stream-'));
  consumer = await startConsumer();
});
afterAll(async () => {
  await consumer.close();
  await rm(dir, { recursive: true, force: true });
});

async function serveWith(name: string, flags: string[]): Promise<Serve> {
  const dataDir = join(dir, name);
  const config = join(dir, `${name}.json`);
  await writeFile(
    config,
    JSON.stringify({
      providers: [
        { name: 'homelab', kind: 'open' },
        { name: 'shop', kind: 'open', forward_to: [consumer.url('/hooks')] },
        { name: 'github', kind: 'github', secrets: [{ env: 'STREAM_GITHUB_SECRET' }] },
      ],
    }),
  );
  return spawnServe(['--data-dir', dataDir, '--config', config, '--port', '0', '--control-port', '0', '--database-url', 'memory://', ...flags], {
    STREAM_GITHUB_SECRET: SECRET,
  });
}

async function stop(serve: Serve): Promise<void> {
  serve.child.kill('SIGTERM');
  await serve.exited;
}

async function github(serve: Serve, body: string, delivery: string, signature?: string): Promise<Response> {
  return fetch(`${serve.receiver}/webhooks/github`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-github-delivery': delivery,
      'x-hub-signature-256': signature ?? (await sign(SECRET, body)),
    },
    body,
  });
}

const post = (serve: Serve, provider: string, body: unknown) => fetch(`${serve.receiver}/webhooks/${provider}`, { method: 'POST', body: JSON.stringify(body) });
const TIME = '\\d\\d:\\d\\d:\\d\\d';

describe('serve prints one line per delivery, duplicate, rejection and forward', () => {
  let serve: Serve;
  beforeAll(async () => {
    serve = await serveWith('text', []);
  });
  afterAll(() => stop(serve));

  it('accepted, duplicate, rejected and forwarded, without colour codes on a pipe', async () => {
    const banner = serve.stdout().length;
    const body = JSON.stringify({ ref: 'refs/heads/main' });
    const first = (await (await github(serve, body, 'delivery-1')).json()) as { id: number };
    await github(serve, body, 'delivery-1');
    await github(serve, body, 'delivery-2', `sha256=${'0'.repeat(64)}`);
    const shop = (await (await post(serve, 'shop', { type: 'order.paid' })).json()) as { id: number };

    const out = await waitForOutput(() => serve.stdout().slice(banner), /→ .*\/hooks/);
    expect(out).toMatch(new RegExp(`^${TIME}  github\\s+push\\s+#${first.id}  signed$`, 'm'));
    expect(out).toMatch(new RegExp(`^${TIME}  github\\s+push\\s+#${first.id}  duplicate of delivery-1, already stored$`, 'm'));
    expect(out).toMatch(new RegExp(`^${TIME}  github\\s+rejected signature_mismatch — \\S`, 'm'));
    expect(out).toMatch(new RegExp(`^${TIME}  shop\\s+order\\.paid\\s+#${shop.id}  open$`, 'm'));
    expect(out).toMatch(new RegExp(`^${TIME}  → ${consumer.url('/hooks').replace(/[.]/g, '\\.')}  200  \\d+ ms  #${shop.id}$`, 'm'));
    expect(serve.stdout()).not.toContain('\u001b[');
    // The rejection is a stream line, not also a stderr warning.
    expect(serve.stderr()).not.toContain('signature_mismatch');
  });

  it('under a burst, every delivery is a line or counted in a "… N more" line', async () => {
    const before = serve.stdout().length;
    const BURST = 400;
    const answers = await Promise.all(Array.from({ length: BURST }, (_, i) => post(serve, 'homelab', { type: 'burst', i })));
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const counted = (text: string) => {
      const lines = text.match(new RegExp(`^${TIME}  homelab\\s+burst\\s+#\\d+  open$`, 'gm')) ?? [];
      const more = [...text.matchAll(/^… ([\d,]+) more in the last second$/gm)].reduce((sum, match) => sum + Number(match[1]!.replace(/,/g, '')), 0);
      return { lines: lines.length, more };
    };
    const out = await waitForOutput(
      () => serve.stdout().slice(before),
      (text) => {
        const { lines, more } = counted(text);
        return lines + more === BURST;
      },
    );
    // Whether this machine delivers them fast enough to be a real burst varies; the in-process
    // test below makes one deterministically.
    const { lines } = counted(out);
    expect(lines).toBeGreaterThanOrEqual(STREAM_LINES_PER_TICK);
  });
});

describe('serve --log-format json', () => {
  it('prints a ready record, then one JSON object per line with stable fields', async () => {
    const serve = await serveWith('json', ['--log-format', 'json']);
    try {
      const body = JSON.stringify({ ref: 'refs/heads/main' });
      const { id } = (await (await github(serve, body, 'json-1')).json()) as { id: number };
      await github(serve, body, 'json-1');
      await github(serve, body, 'json-2', `sha256=${'0'.repeat(64)}`);
      await post(serve, 'shop', { type: 'order.paid' });
      const out = await waitForOutput(serve.stdout, /"type":"replay"/);
      const records = out.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(records[0]).toMatchObject({ type: 'ready', receiver_url: serve.receiver, control_url: serve.control });
      // The start-up steps went to stderr as JSON log records, one each.
      const logs = serve.stderr().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(logs.filter((log) => log.level === 'info').map((log) => log.message)).toEqual(
        expect.arrayContaining(['opening an in-memory database', 'starting the receiver and the control server']),
      );
      expect(logs.every((log) => log.type === 'log' && typeof log.time === 'string')).toBe(true);
      const event = records.find((record) => record.type === 'event' && record.provider === 'github');
      expect(event).toEqual({
        type: 'event',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        id,
        provider: 'github',
        event_type: 'push',
        external_id: 'json-1',
        trust_mode: 'signed',
        verified: true,
        origin: 'provider',
        payload_size: body.length,
      });
      expect(records.find((record) => record.type === 'duplicate')).toMatchObject({ id, external_id: 'json-1' });
      expect(records.find((record) => record.type === 'rejection')).toMatchObject({ provider: 'github', reason: 'signature_mismatch', hint: expect.any(String) });
      expect(records.find((record) => record.type === 'replay')).toMatchObject({
        requested_by: 'forward',
        target_url: consumer.url('/hooks'),
        delivered: true,
        status: 200,
        ms: expect.any(Number),
        error: null,
      });
    } finally {
      await stop(serve);
    }
  });
});

describe('serve --quiet', () => {
  it('prints the banner and no delivery lines', async () => {
    const serve = await serveWith('quiet', ['--quiet']);
    try {
      const banner = serve.stdout();
      expect(banner).toContain('is receiving');
      expect(serve.stderr()).not.toMatch(/opening|migrating|starting the receiver/); // start-up steps are info lines
      const { id } = (await (await post(serve, 'homelab', { type: 'quiet' })).json()) as { id: number };
      expect(id).toBeGreaterThan(0);
      await new Promise((resolve) => setTimeout(resolve, 500)); // several stream ticks
      expect(serve.stdout()).toBe(banner);
    } finally {
      await stop(serve);
    }
  });
});

describe('the stream in process', () => {
  const event = { id: 7, provider: 'stripe', family: 'webhook', event_type: 'checkout.session.completed', external_id: 'evt_1', origin: 'test', trust_mode: 'signed', verified: true, payload_size: 10, received_at: new Date().toISOString(), attempts: 1, drift: false } as const;

  it('paints trust and TEST only when colour is on; shortens rejection hints', async () => {
    const { EventBus } = await import('../../src/core/bus.js');
    const { startTerminalStream, shortHint } = await import('../../src/cli/stream.js');
    for (const color of [true, false]) {
      const bus = new EventBus();
      let out = '';
      const stream = startTerminalStream(bus, { format: 'text', color, write: (chunk) => (out += chunk) });
      bus.emit('event', event);
      await waitForOutput(() => out, /#7/);
      stream.close();
      expect(out.includes('\u001b[')).toBe(color);
      expect(out.replace(/\u001b\[\d+m/g, '')).toMatch(/^\d\d:\d\d:\d\d  stripe\s+checkout\.session\.completed\s+#7  signed  TEST\n$/);
    }
    expect(shortHint('no Linear-Signature header: is this URL the one set under Settings?')).toBe('no Linear-Signature header');
    expect(shortHint('x'.repeat(200))).toHaveLength(90);
  });

  it('coalesces only real bursts: 10 events and 10 replays print whole; 1,000 at once print a backlog and a count', async () => {
    const { EventBus } = await import('../../src/core/bus.js');
    const { startTerminalStream, STREAM_BACKLOG } = await import('../../src/cli/stream.js');
    const bus = new EventBus();
    let out = '';
    const stream = startTerminalStream(bus, { format: 'text', color: false, write: (chunk) => (out += chunk) });
    const replay = { id: 1, event_id: 7, target_url: 'http://localhost:3000/hooks', requested_by: 'forward', delivered: true, response_status: 200, response_ms: 3, resigned: true, error: null, created_at: new Date().toISOString() };
    for (let i = 0; i < 10; i++) {
      bus.emit('event', { ...event, id: 100 + i });
      bus.emit('replay', { ...replay, id: i + 1, event_id: 100 + i } as never);
    }
    await waitForOutput(() => out, (text) => text.split('\n').length > 20);
    expect(out.trim().split('\n')).toHaveLength(20);
    expect(out).not.toMatch(/more in the last second/);

    out = '';
    for (let i = 0; i < 1_000; i++) bus.emit('event', { ...event, id: 1_000 + i });
    const more = (text: string) => Number(/… ([\d,]+) more in the last second/.exec(text)?.[1]?.replace(/,/g, '') ?? 0);
    await waitForOutput(() => out, (text) => more(text) > 0 && text.trim().split('\n').length > STREAM_BACKLOG, 10_000);
    stream.close();
    const lines = out.trim().split('\n').filter((line) => /#\d+/.test(line)).length;
    expect(lines).toBe(STREAM_BACKLOG);
    expect(lines + more(out)).toBe(1_000);
  });

  it('close() stops listening', async () => {
    const { EventBus } = await import('../../src/core/bus.js');
    const { startTerminalStream } = await import('../../src/cli/stream.js');
    const bus = new EventBus();
    const stream = startTerminalStream(bus, { format: 'json', color: false, write: () => {} });
    expect(bus.listenerCount('event')).toBe(1);
    stream.close();
    expect(bus.listenerCount('event') + bus.listenerCount('duplicate') + bus.listenerCount('rejection') + bus.listenerCount('replay')).toBe(0);
  });
});
