import { sign as githubSign, verify as githubVerify } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ConfigInput } from '../../../src/core/config.js';
import type { ReplayRecord } from '../../../src/core/store/types.js';
import { FORWARD_QUEUE_LIMIT } from '../../../src/core/replay/forward.js';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { closedPort, startConsumer, type Consumer } from './consumer.js';

const GITHUB_SECRET = 'forward-rule-github-secret-0123';
const TIMEOUT_MS = 3000;

let t: TestSwitchboard;
let first: Consumer;
let second: Consumer;
let slow: Consumer;
let config: ConfigInput;

beforeAll(async () => {
  [first, second, slow] = await Promise.all([startConsumer(), startConsumer(), startConsumer()]);
  slow.respond = () => {}; // accepts, never answers
  const down = await closedPort();
  config = {
    providers: [
      { name: 'shop', kind: 'open', forward_to: [first.url('/a'), second.url('/b')] },
      { name: 'github', kind: 'github', secrets: [{ env: 'GH_SECRET' }], forward_to: [first.url('/gh')] },
      { name: 'down', kind: 'open', forward_to: [`http://127.0.0.1:${down}/hooks`] },
      { name: 'hang', kind: 'open', forward_to: [slow.url('/hang')] },
      { name: 'flood', kind: 'open', forward_to: [slow.url('/flood')] },
      { name: 'blocked', kind: 'open', forward_to: ['http://169.254.169.254/latest/meta-data/'] },
      { name: 'echo', kind: 'open' },
      { name: 'quiet', kind: 'open' },
    ],
    replay: { timeout_ms: TIMEOUT_MS },
  };
  t = await startTestSwitchboard(config, { env: { GH_SECRET: GITHUB_SECRET } });
  // Warm the HTTP client once, so the timing tests measure forwarding, not module loading.
  const warm = await t.deliver('/webhooks/quiet', '{}');
  await t.sb.replays.replay({ eventId: warm.json.id, targetUrl: first.url('/warm'), requestedBy: 'ui' });
  first.reset();
});
afterAll(async () => {
  await Promise.all([first?.close(), second?.close(), slow?.close()]);
  await t?.close();
});

/** Resolves with the first `count` replay rows of an event, as the bus announces them. */
function replaysOf(event: { id?: number }, count: number, timeoutMs = 5_000): Promise<ReplayRecord[]> {
  return new Promise((resolve, reject) => {
    // Every replay from now on: a forward may be recorded before the delivery's answer (and so
    // the event's id) reaches the test — the answer only waits for the journal, not the forward.
    const all: ReplayRecord[] = [];
    const mine = () => all.filter((record) => event.id !== undefined && record.event_id === event.id);
    const finish = () => {
      clearTimeout(timer);
      clearInterval(poll);
      t.sb.bus.off('replay', listener);
    };
    const check = () => {
      const seen = mine();
      if (seen.length < count) return;
      finish();
      resolve(seen.slice(0, count));
    };
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`saw ${mine().length} of ${count} replays within ${timeoutMs} ms`));
    }, timeoutMs);
    const poll = setInterval(check, 10);
    const listener = (record: ReplayRecord) => {
      all.push(record);
      check();
    };
    t.sb.bus.on('replay', listener);
  });
}

describe('forward rules', () => {
  it('forward every accepted event to each target within a second, recorded as requested_by forward', async () => {
    const event: { id?: number } = {};
    const rows = replaysOf(event, 2);
    const requests = Promise.all([first.nextRequest(), second.nextRequest()]);
    const answer = await t.deliver('/webhooks/shop', '{"type":"order.created","n":1}', { 'content-type': 'application/json', 'x-event-type': 'order.created' });
    const acceptedAt = Date.now();
    expect(answer.status).toBe(200);
    event.id = answer.json.id;
    const [a, b] = await requests;
    for (const request of [a, b]) {
      expect(request.at - acceptedAt).toBeLessThan(1_000);
      expect(request.body.toString()).toBe('{"type":"order.created","n":1}');
      expect(request.headers['x-switchboard-replay']).toBe(String(event.id));
      expect(request.headers['x-event-type']).toBe('order.created');
    }
    expect([a.url, b.url]).toEqual(['/a', '/b']);
    const recorded = await rows;
    expect(recorded.map((row) => row.target_url).sort()).toEqual([first.url('/a'), second.url('/b')].sort());
    for (const row of recorded) expect(row).toMatchObject({ requested_by: 'forward', delivered: true, response_status: 200 });
    expect((await t.sb.replays.history(event.id!)).length).toBe(2);
  });

  it('re-signs forwarded events so the consumer\'s own check passes', async () => {
    const body = '{"action":"opened","number":12}';
    const request = first.nextRequest();
    const event: { id?: number } = {};
    const rows = replaysOf(event, 1);
    const answer = await t.deliver('/webhooks/github', body, {
      'content-type': 'application/json',
      'x-github-event': 'pull_request',
      'x-github-delivery': 'forward-gh-1',
      'x-hub-signature-256': await githubSign(GITHUB_SECRET, body),
    });
    expect(answer.status).toBe(200);
    event.id = answer.json.id;
    const received = await request;
    expect(received.url).toBe('/gh');
    expect(received.headers['x-github-event']).toBe('pull_request');
    expect(await githubVerify(GITHUB_SECRET, received.body.toString(), received.headers['x-hub-signature-256'] as string)).toBe(true);
    // The row records what went out, with the signature «redacted», like any replay.
    const [row] = await rows;
    expect(row).toMatchObject({ requested_by: 'forward', resigned: true, warning: null, payload_edited: false, headers_overridden: [] });
    expect(row!.request_headers).toMatchObject({ 'x-github-event': 'pull_request', 'x-hub-signature-256': '«redacted»' });
  });

  it('answers the provider at once while the forward target hangs, then records the timeout', async () => {
    const event: { id?: number } = {};
    const rows = replaysOf(event, 1, TIMEOUT_MS + 5_000);
    const reached = slow.nextRequest();
    const started = Date.now();
    const answer = await t.deliver('/webhooks/hang', '{"slow":true}');
    const answeredMs = Date.now() - started;
    expect(answer.status).toBe(200);
    event.id = answer.json.id;
    // The forward holds for TIMEOUT_MS; the provider's answer does not wait for it.
    expect(answeredMs).toBeLessThan(TIMEOUT_MS / 2);
    expect((await reached).url).toBe('/hang');
    const [row] = await rows;
    expect(row).toMatchObject({ requested_by: 'forward', delivered: false, response_status: null });
    expect(row!.error).toMatch(new RegExp(`within ${TIMEOUT_MS} ms`));
  });

  it('records a forward to a target that is down as a failure, and the provider still gets its 200', async () => {
    const event: { id?: number } = {};
    const rows = replaysOf(event, 1);
    const answer = await t.deliver('/webhooks/down', '{"down":true}');
    expect(answer.status).toBe(200);
    event.id = answer.json.id;
    const [row] = await rows;
    expect(row).toMatchObject({ requested_by: 'forward', delivered: false });
    expect(row!.error).toMatch(/connection refused/);
    await vi.waitFor(() => expect(t.logger.lines.some((line) => line.includes('forwarding to http://127.0.0.1') && line.includes('failed'))).toBe(true));
  });

  it('records a forward rule the guard refuses, and warned about it at start', async () => {
    const event: { id?: number } = {};
    const rows = replaysOf(event, 1);
    const answer = await t.deliver('/webhooks/blocked', '{"x":1}');
    expect(answer.status).toBe(200);
    event.id = answer.json.id;
    const [row] = await rows;
    expect(row).toMatchObject({ requested_by: 'forward', delivered: false, target_url: 'http://169.254.169.254/latest/meta-data/' });
    expect(row!.error).toMatch(/refused.*link-local/);
    expect(t.logger.lines.some((line) => line.includes('provider "blocked": forward_to') && line.includes('will be refused'))).toBe(true);
  });

  it('does not forward an event that arrived as a switchboard replay (no loops)', async () => {
    const self = `${t.sb.url.receiver}/webhooks/echo`;
    await t.sb.updateConfig({ ...config, providers: config.providers!.map((p) => (p.name === 'echo' ? { ...p, forward_to: [self] } : p)) });
    try {
      const copies: number[] = [];
      const onEvent = (event: { provider: string; id: number }) => {
        if (event.provider === 'echo') copies.push(event.id);
      };
      t.sb.bus.on('event', onEvent);
      const answer = await t.deliver('/webhooks/echo', '{"echo":1}');
      expect(answer.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      t.sb.bus.off('event', onEvent);
      // The original, and the forwarded copy the receiver accepted; the copy is not forwarded again.
      expect(copies).toHaveLength(2);
      const copy = await t.sb.store.getEvent(copies[1]!);
      expect(copy!.headers['x-switchboard-replay']).toBe(String(answer.json.id));
      expect(await t.sb.replays.history(copies[1]!)).toEqual([]);
    } finally {
      await t.sb.updateConfig(config);
    }
  });

  it('keeps at most FORWARD_QUEUE_LIMIT events waiting per target and records the ones it drops', async () => {
    const dropped: ReplayRecord[] = [];
    const onReplay = (record: ReplayRecord) => {
      if (record.target_url === slow.url('/flood')) dropped.push(record);
    };
    t.sb.bus.on('replay', onReplay);
    const total = FORWARD_QUEUE_LIMIT + 12;
    const started = Date.now();
    const statuses: number[] = [];
    for (let batch = 0; batch < total; batch += 16) {
      const answers = await Promise.all(
        Array.from({ length: Math.min(16, total - batch) }, (_, i) => t.deliver('/webhooks/flood', `{"n":${batch + i}}`)),
      );
      statuses.push(...answers.map((answer) => answer.status));
    }
    const elapsed = Date.now() - started;
    expect(statuses.every((status) => status === 200)).toBe(true);
    // Hardly any time to drain: the slow target holds one forward at a time for TIMEOUT_MS.
    const drained = Math.ceil(elapsed / TIMEOUT_MS) + 1;
    await new Promise((resolve) => setTimeout(resolve, 200));
    t.sb.bus.off('replay', onReplay);
    const queueFull = dropped.filter((row) => /already waiting/.test(row.error ?? ''));
    expect(queueFull.length).toBeGreaterThanOrEqual(total - FORWARD_QUEUE_LIMIT - drained);
    for (const row of queueFull) expect(row).toMatchObject({ delivered: false, requested_by: 'forward', response_status: null });
    expect(slow.requests.filter((request) => request.url === '/flood').length).toBeLessThanOrEqual(drained);
  });
});
