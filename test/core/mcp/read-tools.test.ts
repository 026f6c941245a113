import { createHash, randomBytes } from 'node:crypto';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TEXT_COPY_CHARS } from '../../../src/core/mcp/tool.js';
import { DEFAULT_MAX_PAYLOAD_BYTES, RECENT_REPLAYS } from '../../../src/core/mcp/tools/get-webhook-event.js';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { newEvent } from '../../helpers/events.js';
import { connectMcp, outputSize, type McpTestClient } from '../../helpers/mcp.js';
import { startConsumer, type Consumer } from '../replay/consumer.js';

/**
 * The read tools as an agent meets them: bounded payloads, filters that match the UI's, a
 * provider typo that is an error rather than an empty page, and the rejection log.
 */

const GITHUB_SECRET = 'gh-read-tools-secret-0123456789ab';
/** What every answer is held to (DESIGN §6), unless the caller asks for a bigger payload. */
const MAX_OUTPUT_BYTES = 100 * 1024;

let t: TestSwitchboard;
let agent: McpTestClient;
let consumer: Consumer;

beforeAll(async () => {
  consumer = await startConsumer();
  t = await startTestSwitchboard(
    {
      providers: [
        { name: 'github', kind: 'github', secrets: [{ env: 'GH_SECRET' }] },
        { name: 'homelab', kind: 'open' },
      ],
    },
    { env: { GH_SECRET: GITHUB_SECRET } },
  );
  agent = await connectMcp(t);
});
afterAll(async () => {
  await agent?.close();
  await consumer?.close();
  await t?.close();
});

async function stored(payload: Buffer | string, overrides: Parameters<typeof newEvent>[0] = {}): Promise<number> {
  const { event } = await t.sb.store.insertEvent(newEvent({ provider: 'homelab', payload: Buffer.from(payload), ...overrides }));
  return event.id;
}

async function getEvent(id: number, max?: number) {
  const result = await agent.call('get_webhook_event', { id, ...(max === undefined ? {} : { max_payload_bytes: max }) });
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
  return { detail: result.structuredContent as Record<string, any>, size: outputSize(result), text: (result.content[0] as { text: string }).text };
}

describe('get_webhook_event: bounded payloads', () => {
  it(`returns ${DEFAULT_MAX_PAYLOAD_BYTES} bytes by default: at the limit whole, one byte over cut`, async () => {
    const at = 'x'.repeat(DEFAULT_MAX_PAYLOAD_BYTES);
    expect((await getEvent(await stored(at))).detail).toMatchObject({ payload: at, payload_encoding: 'utf8', payload_truncated: false });
    const over = (await getEvent(await stored(`${at}y`))).detail;
    expect(over).toMatchObject({ payload: at, payload_truncated: true, payload_size: DEFAULT_MAX_PAYLOAD_BYTES + 1 });
  });

  it('cuts text on a UTF-8 character boundary (2-, 3- and 4-byte characters)', async () => {
    const id = await stored(`{"note":"${'é€😀'.repeat(50)}"}`);
    // {"note":" is 9 bytes; then é (2) € (3) 😀 (4) repeat.
    const cuts: [number, string][] = [
      [9, '{"note":"'],
      [10, '{"note":"'],
      [11, '{"note":"é'],
      [13, '{"note":"é'],
      [14, '{"note":"é€'],
      [17, '{"note":"é€'],
      [18, '{"note":"é€😀'],
    ];
    for (const [max, expected] of cuts) {
      const { detail } = await getEvent(id, max);
      expect(detail, `max_payload_bytes ${max}`).toMatchObject({ payload: expected, payload_encoding: 'utf8', payload_truncated: true });
      expect(Buffer.byteLength(detail.payload)).toBeLessThanOrEqual(max);
    }
  });

  it('returns binary as base64 of exactly the first bytes, and nothing at 0', async () => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0x00, 0xc3]), randomBytes(5000)]);
    const id = await stored(bytes);
    const { detail } = await getEvent(id, 1001);
    expect(detail).toMatchObject({ payload_encoding: 'base64', payload_truncated: true });
    expect(Buffer.from(detail.payload, 'base64').equals(bytes.subarray(0, 1001))).toBe(true);
    const whole = (await getEvent(id, 5003)).detail;
    expect(whole.payload_truncated).toBe(false);
    expect(Buffer.from(whole.payload, 'base64').equals(bytes)).toBe(true);
    const none = (await getEvent(id, 0)).detail;
    expect(none).toMatchObject({ payload: '', payload_encoding: 'base64', payload_truncated: true, payload_size: 5003 });
    expect(none.headers).toEqual({ 'content-type': 'application/json' });
  });

  it('refuses max_payload_bytes beyond 1 MiB or negative', async () => {
    const id = await stored('{}');
    expect(await agent.error('get_webhook_event', { id, max_payload_bytes: 1024 * 1024 + 1 }, 'invalid_argument')).toMatch(/max_payload_bytes/);
    await agent.error('get_webhook_event', { id, max_payload_bytes: -1 }, 'invalid_argument');
  });

  it('keeps a 1.5 MB payload’s answer small by default, and sends a large one once, not twice', async () => {
    const big = JSON.stringify({ items: Array.from({ length: 30_000 }, (_, index) => ({ index, note: 'padding-text' })) });
    expect(big.length).toBeGreaterThan(1_000_000);
    const id = await stored(big);
    const small = await getEvent(id);
    expect(small.size).toBeLessThan(MAX_OUTPUT_BYTES);
    expect(small.detail.payload_truncated).toBe(true);

    const large = await getEvent(id, 1024 * 1024);
    expect(large.detail.payload).toBe(big.slice(0, 1024 * 1024));
    // The text copy points at structuredContent instead of repeating the megabyte.
    expect(large.text.length).toBeLessThanOrEqual(MAX_TEXT_COPY_CHARS);
    expect(JSON.parse(large.text).payload).toMatch(/not repeated in this text copy: read structuredContent\.payload/);
    expect(large.size).toBeLessThan(1024 * 1024 * 1.3);
  });

  it(`lists the ${RECENT_REPLAYS} latest replays, newest first`, async () => {
    const id = await stored('{"replayed":true}');
    const rows = [];
    for (let attempt = 0; attempt < RECENT_REPLAYS + 1; attempt++) {
      rows.push(await t.sb.replays.replay({ eventId: id, targetUrl: consumer.url(`/r${attempt}`), requestedBy: attempt % 2 ? 'ui' : 'forward' }));
    }
    const { detail } = await getEvent(id);
    expect(detail.replays.map((replay: { id: number }) => replay.id)).toEqual(rows.slice(1).reverse().map((row) => row.id));
    expect(detail.replays[0]).toEqual({
      id: rows.at(-1)!.id,
      target_url: consumer.url(`/r${RECENT_REPLAYS}`),
      requested_by: 'ui',
      resigned: false,
      delivered: true,
      response_status: 200,
      response_ms: expect.any(Number),
      created_at: rows.at(-1)!.created_at,
    });
  });
});

describe('list_webhook_events: the UI’s filters', () => {
  it('filters by search, trust_mode, origin and external_id; summaries carry external_id and origin', async () => {
    const tag = randomBytes(4).toString('hex');
    const real = await stored(`{"order":"Widget-${tag}"}`, { provider: 'github', trust_mode: 'signed', verified: true, external_id: `gh-${tag}` });
    const test = await stored(`{"order":"widget-${tag}"}`, { origin: 'test', external_id: `test-${tag}` });
    const imported = await stored(`{"other":"${tag}"}`, { origin: 'import', event_type: `Gadget.${tag}` });
    const ids = async (args: Record<string, unknown>) =>
      (await agent.ok<{ events: { id: number }[] }>('list_webhook_events', args)).events.map((event) => event.id);

    expect(await ids({ search: `WIDGET-${tag}` })).toEqual([test, real]);
    expect(await ids({ search: `gadget.${tag}` })).toEqual([imported]); // the event type matches too
    expect(await ids({ search: tag, trust_mode: 'signed' })).toEqual([real]);
    expect(await ids({ search: tag, origin: 'test' })).toEqual([test]);
    expect(await ids({ search: tag, origin: 'import' })).toEqual([imported]);
    expect(await ids({ external_id: `gh-${tag}` })).toEqual([real]);
    const [summary] = (await agent.ok<{ events: Record<string, unknown>[] }>('list_webhook_events', { external_id: `test-${tag}` })).events;
    expect(summary).toMatchObject({ id: test, external_id: `test-${tag}`, origin: 'test' });
    await agent.error('list_webhook_events', { origin: 'somewhere' }, 'invalid_argument');
    await agent.error('list_webhook_events', { trust_mode: 'trusted' }, 'invalid_argument');
  });

  it('answers a provider that is neither configured nor stored with invalid_argument naming the configured ones', async () => {
    for (const [tool, args] of [
      ['list_webhook_events', {}],
      ['list_rejections', {}],
      ['wait_for_webhook_event', { timeout_s: 60 }],
    ] as const) {
      const started = Date.now();
      const message = await agent.error(tool, { ...args, provider: 'gihub' }, 'invalid_argument');
      expect(message).toBe('there is no provider named "gihub"; configured providers: "github", "homelab"');
      expect(Date.now() - started).toBeLessThan(10_000);
    }
    // A provider removed from the config whose events are still stored is a fine filter.
    const id = await stored('{"legacy":true}', { provider: 'legacy-shop' });
    expect((await agent.ok<{ events: { id: number }[] }>('list_webhook_events', { provider: 'legacy-shop' })).events.map((event) => event.id)).toEqual([id]);
  });

  it('keeps a full page of long summaries near 100 KB, continuing with a cursor instead', async () => {
    const long = `very.long.event.type.${'x'.repeat(400)}`;
    await Promise.all(Array.from({ length: 220 }, (_, index) => stored('{}', { provider: 'wide', event_type: long, external_id: `${'id-'.repeat(60)}${index}` })));
    const seen = new Set<number>();
    let cursor: string | undefined;
    let pages = 0;
    do {
      const result = await agent.call('list_webhook_events', { provider: 'wide', limit: 200, ...(cursor ? { cursor } : {}) });
      expect(outputSize(result)).toBeLessThan(MAX_OUTPUT_BYTES);
      const page = result.structuredContent as { events: { id: number }[]; next_cursor?: string };
      for (const event of page.events) {
        expect(seen.has(event.id)).toBe(false);
        seen.add(event.id);
      }
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    expect(seen.size).toBe(220);
    expect(pages).toBeGreaterThan(2);
  });
});

describe('list_rejections: why a webhook did not arrive', () => {
  it('shows a wrong-secret delivery with its diagnosis, newest first, paged', async () => {
    const body = '{"zen":"Keep it logically awesome."}';
    for (const delivery of ['wrong-1', 'wrong-2']) {
      const answer = await t.deliver('/webhooks/github', body, {
        'content-type': 'application/json',
        'x-github-event': 'ping',
        'x-github-delivery': delivery,
        'x-hub-signature-256': await githubSign('the-secret-of-another-repository', body),
      });
      expect(answer.status).toBe(401);
    }
    const first = await agent.ok<{ rejections: Record<string, unknown>[]; next_cursor?: string }>('list_rejections', { provider: 'github', limit: 1 });
    expect(first.rejections).toEqual([
      {
        id: expect.any(Number),
        provider: 'github',
        reason: 'signature_mismatch',
        hint: expect.stringMatching(/secret/),
        body_size: Buffer.byteLength(body),
        body_sha256: createHash('sha256').update(body).digest('hex'),
        source_ip: '127.0.0.1',
        received_at: expect.any(String),
      },
    ]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await agent.ok<{ rejections: { id: number }[] }>('list_rejections', { provider: 'github', limit: 1, cursor: first.next_cursor });
    expect(second.rejections[0]!.id).toBeLessThan(first.rejections[0]!.id as number);
    expect(await agent.ok('list_rejections', { provider: 'homelab' })).toEqual({ rejections: [] });
  });
});

describe('list_webhook_events: a search that runs out of time', () => {
  it('answers what it found with searched_back_to and a cursor that searches on, matching the published schema', async () => {
    // Every answer is one 3-row slice, as a phrase the index cannot narrow down gets at a million events.
    const tuned = await startTestSwitchboard({ providers: [{ name: 'homelab', kind: 'open' }] }, { searchTuning: { windowRows: 3, budgetMs: 0, indexMaxCandidates: 0 } });
    const tunedAgent = await connectMcp(tuned);
    try {
      const ids: number[] = [];
      for (let n = 0; n < 8; n++) ids.push((await tuned.deliver('/webhooks/homelab', JSON.stringify({ type: 'tick', n, note: n === 0 ? 'Otter-5' : 'x' }), { 'content-type': 'application/json' })).json.id);
      type Page = { events: { id: number; received_at: string }[]; next_cursor?: string; searched_back_to?: string };
      const first = await tunedAgent.ok<Page>('list_webhook_events', { search: 'otter-5', limit: 5 });
      expect(first.events).toEqual([]);
      expect(first.searched_back_to).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      expect(first.next_cursor).toEqual(expect.any(String));
      let page = first;
      const found: number[] = [];
      while (page.next_cursor) {
        page = await tunedAgent.ok<Page>('list_webhook_events', { search: 'otter-5', limit: 5, cursor: page.next_cursor });
        found.push(...page.events.map((event) => event.id));
      }
      expect(found).toEqual([ids[0]]);
      expect(page.searched_back_to).toBeUndefined();
    } finally {
      await tunedAgent.close();
      await tuned.close();
    }
  });
});
