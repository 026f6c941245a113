import Stripe from 'stripe';
import { verify } from '@octokit/webhooks-methods';
import { sign } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { API } from '../../../src/shared/api.js';
import { chaosPlan } from '../../../src/core/replay/replay.js';
import { parseChaosSpec, seededRandom, ChaosProfileSchema } from '../../../src/shared/delivery-lab.js';
import { startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../../helpers/core.js';
import { connectMcp, type McpTestClient } from '../../helpers/mcp.js';
import { startConsumer, type Consumer } from '../replay/consumer.js';

/**
 * Chaos profiles (DESIGN §15) against a real consumer that checks every copy with the
 * providers' own libraries: duplicates re-signed with fresh timestamps and the same delivery
 * id, each a replays row marked, and the idempotency verdict.
 */

const STRIPE_SECRET = 'whsec_chaos_lab_secret_0123456789abcd';
const GITHUB_SECRET = 'github-chaos-lab-secret';
const stripe = new Stripe('sk_test_unused');

let t: TestSwitchboard;
let consumer: Consumer;
let forwarded: Consumer;
let mcp: McpTestClient;
/** The consumer's handler: first delivery of an id 200; later ones 200 (idempotent) or 409. */
let idempotent = true;
const seen = new Set<string>();
const verifiedCopies: { id: string; timestamp: string }[] = [];

async function api(method: string, input: unknown) {
  const response = await fetch(`${t.sb.url.control}/api/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_TOKEN}` },
    body: JSON.stringify(input),
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function deliverStripe(id: string): Promise<number> {
  const payload = JSON.stringify({ id, object: 'event', type: 'invoice.paid', data: { object: {} } });
  const header = stripe.webhooks.generateTestHeaderString({ payload, secret: STRIPE_SECRET });
  const answer = await t.deliver('/webhooks/stripe', payload, { 'content-type': 'application/json', 'stripe-signature': header });
  expect(answer.status).toBe(200);
  return answer.json.id as number;
}

beforeAll(async () => {
  consumer = await startConsumer();
  consumer.respond = (request, res) => {
    // Stripe's own library checks every copy; a copy that fails verification is a 400.
    try {
      const event = stripe.webhooks.constructEvent(request.body, String(request.headers['stripe-signature']), STRIPE_SECRET);
      verifiedCopies.push({ id: event.id, timestamp: /t=(\d+)/.exec(String(request.headers['stripe-signature']))![1]! });
      const again = seen.has(event.id);
      seen.add(event.id);
      res.writeHead(again && !idempotent ? 409 : 200).end(again && !idempotent ? 'already processed' : 'ok');
    } catch {
      res.writeHead(400).end('bad signature');
    }
  };
  forwarded = await startConsumer();
  forwarded.respond = async (request, res) => {
    const ok = await verify(GITHUB_SECRET, request.body.toString('utf8'), String(request.headers['x-hub-signature-256']));
    res.writeHead(ok ? 200 : 400).end();
  };
  t = await startTestSwitchboard({
    providers: [
      { name: 'stripe', kind: 'stripe', secrets: [{ value: STRIPE_SECRET }] },
      {
        name: 'github',
        kind: 'github',
        secrets: [{ value: GITHUB_SECRET }],
        forward: [{ to: forwarded.url('/gh'), chaos: { duplicate: { probability: 1, copies: 1, after_ms: 0 }, reorder_window: 4, seed: 3 } }],
      },
    ],
  });
  mcp = await connectMcp(t);
});
afterAll(async () => {
  await mcp?.close();
  await t?.close();
  await consumer?.close();
  await forwarded?.close();
});
beforeEach(() => {
  seen.clear();
  verifiedCopies.length = 0;
});

describe('replay with a chaos profile', () => {
  it('sends re-signed duplicates with the same delivery id; every copy 2xx is idempotent', async () => {
    idempotent = true;
    const id = await deliverStripe('evt_chaos_1');
    const { status, body } = await api('replayEvent', { id, target_url: consumer.url('/hooks'), chaos: { duplicate: { probability: 1, copies: 2, after_ms: 1100 }, seed: 1 } });
    expect(status, JSON.stringify(body)).toBe(200);
    const result = API.replayEvent.output.parse(body);
    expect(result.response_status).toBe(200);
    expect(result.copies?.map((copy) => [copy.response_status, copy.chaos])).toEqual([
      [200, 'duplicate'],
      [200, 'duplicate'],
    ]);
    expect(result.idempotency).toBe('idempotent');
    expect(verifiedCopies.map((copy) => copy.id)).toEqual(['evt_chaos_1', 'evt_chaos_1', 'evt_chaos_1']);
    // Fresh timestamps: 1.1 s apart, so each copy's signed time moves on.
    expect(new Set(verifiedCopies.map((copy) => copy.timestamp)).size).toBeGreaterThan(1);
    const rows = (await api('listReplays', { event_id: id })).body.replays as { chaos: string | null }[];
    expect(rows.map((row) => row.chaos).sort()).toEqual(['duplicate', 'duplicate', null]);
  });

  it('is not_idempotent when a copy gets a non-2xx after the first got a 2xx — over MCP too', async () => {
    idempotent = false;
    const id = await deliverStripe('evt_chaos_2');
    const result = await mcp.ok('replay_webhook_event', { id, target_url: consumer.url('/hooks'), chaos: 'duplicate=1,copies=1,after=0,seed=5' });
    expect(result).toMatchObject({ response_status: 200, idempotency: 'not_idempotent' });
    expect(await mcp.error('replay_webhook_event', { id, target_url: consumer.url('/hooks'), chaos: 'duplicate=2' }, 'invalid_argument')).toMatch(/chaos/);
    expect(await mcp.error('replay_webhook_event', { id, target_url: consumer.url('/hooks'), chaos: 'jitter=5' }, 'invalid_argument')).toMatch(/unknown part/);
  });

  it('marks a delayed send', async () => {
    idempotent = true;
    const id = await deliverStripe('evt_chaos_3');
    const { body } = await api('replayEvent', { id, target_url: consumer.url('/hooks'), chaos: { delay_ms: { min: 50, max: 60 } } });
    expect(body).toMatchObject({ chaos: 'delayed', response_status: 200 });
    expect(body.copies).toBeUndefined();
  });

  it('decides the same with the same seed', () => {
    const profile = ChaosProfileSchema.parse(parseChaosSpec('duplicate=0.5,copies=1,after=0,delay=0-500,seed=42'));
    const run = () => {
      const random = seededRandom(profile.seed!);
      return Array.from({ length: 30 }, () => chaosPlan(profile, random));
    };
    expect(run()).toEqual(run());
    expect(new Set(run().map((plan) => plan.copies))).toEqual(new Set([0, 1]));
    expect(() => parseChaosSpec('delay=abc')).toThrow(/delay=abc/);
  });
});

describe('forward rules with chaos', () => {
  it('forwards every event with its duplicate, a window shuffled, each copy verified by the octokit library', async () => {
    forwarded.reset();
    const ids: number[] = [];
    for (let i = 0; i < 4; i++) {
      const body = JSON.stringify({ action: 'opened', number: i });
      const answer = await t.deliver('/webhooks/github', body, {
        'content-type': 'application/json',
        'x-github-event': 'issues',
        'x-github-delivery': `chaos-delivery-${i}`,
        'x-hub-signature-256': await sign(GITHUB_SECRET, body),
      });
      ids.push(answer.json.id);
    }
    const deadline = Date.now() + 20_000;
    while (forwarded.requests.length < 8 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(forwarded.requests).toHaveLength(8);
    // Each copy keeps its delivery id header.
    const deliveries = forwarded.requests.map((request) => request.headers['x-github-delivery']);
    expect(new Set(deliveries).size).toBe(4);
    const rows = (await Promise.all(ids.map(async (id) => (await api('listReplays', { event_id: id })).body.replays as { chaos: string | null; response_status: number }[]))).flat();
    expect(rows).toHaveLength(8);
    expect(rows.every((row) => row.response_status === 200)).toBe(true);
    expect(rows.filter((row) => row.chaos === 'duplicate')).toHaveLength(4);
    // Seed 3 shuffles the window of 4: at least one event left its place.
    expect(rows.some((row) => row.chaos === 'reordered')).toBe(true);
  });
});
