import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createHmac } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, type ConfigInput } from '../../../src/core/config.js';
import { createSwitchboard } from '../../../src/core/switchboard.js';
import { memoryLogger, startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../../helpers/core.js';

/**
 * Answer rules and attempts (DESIGN §15) against a real receiver and PGlite, deliveries signed by
 * Stripe's own library: what the provider is answered, attempt after attempt.
 */

const STRIPE_SECRET = 'whsec_delivery_lab_secret_0123456789';
const SLACK_SECRET = 'slack-signing-secret-delivery-lab';
const stripe = new Stripe('sk_test_unused');

function stripeDelivery(t: TestSwitchboard, provider: string, event: { id: string; type: string; livemode?: boolean }) {
  const payload = JSON.stringify({ id: event.id, object: 'event', type: event.type, data: { object: { livemode: event.livemode ?? false } } });
  const header = stripe.webhooks.generateTestHeaderString({ payload, secret: STRIPE_SECRET });
  return t.deliver(`/webhooks/${provider}`, payload, { 'content-type': 'application/json', 'stripe-signature': header });
}

const stripeProvider = (name: string, answer: ConfigInput['providers'] extends (infer P)[] | undefined ? (P extends { answer?: infer A } ? A : never) : never) => ({
  name,
  kind: 'stripe' as const,
  secrets: [{ value: STRIPE_SECRET }],
  answer,
});

let t: TestSwitchboard;

beforeAll(async () => {
  t = await startTestSwitchboard({
    providers: [
      stripeProvider('stripe', [
        { when: { event_type: 'invoice.*' }, status: 503, headers: { 'retry-after': '5' }, first_attempts: 2 },
        { when: { path: 'data.object.livemode', equals: true }, status: 500, body: 'live mode refused' },
      ]),
      stripeProvider('coin-a', [{ status: 503, probability: 0.5, seed: 7 }]),
      stripeProvider('coin-b', [{ status: 503, probability: 0.5, seed: 7 }]),
      stripeProvider('slow', [{ status: 200, delay_ms: 30_000 }]),
      { name: 'slack', kind: 'slack', secrets: [{ value: SLACK_SECRET }], answer: [{ status: 500 }] },
      { name: 'plain', kind: 'open' },
    ],
  });
});
afterAll(() => t?.close());

describe('answer rules', () => {
  it('answers the first N attempts of a delivery by the rule, then normally, and logs every attempt', async () => {
    const lines: string[] = [];
    t.sb.bus.on('answered', (a) => lines.push(`answered ${a.status} by rule ${a.rule}, attempt ${a.attempt}`));
    const first = await stripeDelivery(t, 'stripe', { id: 'evt_retry_1', type: 'invoice.payment_failed' });
    expect(first.status).toBe(503);
    expect(first.json).toMatchObject({ error: 'answer_rule', hint: expect.stringContaining('rule 1') });
    const second = await stripeDelivery(t, 'stripe', { id: 'evt_retry_1', type: 'invoice.payment_failed' });
    expect(second.status).toBe(503);
    const third = await stripeDelivery(t, 'stripe', { id: 'evt_retry_1', type: 'invoice.payment_failed' });
    expect(third.status).toBe(200);
    expect(third.json).toMatchObject({ duplicate: true });

    const page = await t.sb.store.listEvents({ provider: 'stripe', external_id: 'evt_retry_1', limit: 5 });
    expect(page.items).toHaveLength(1);
    expect(page.items[0]!.attempts).toBe(3);
    const log = await t.sb.store.attemptLog(page.items[0]!);
    expect(log.map((a) => [a.attempt, a.status, a.rule])).toEqual([
      [1, 503, 1],
      [2, 503, 1],
      [3, 200, null],
    ]);
    expect(lines).toEqual(['answered 503 by rule 1, attempt 1', 'answered 503 by rule 1, attempt 2']);
  });

  it('sends the rule headers and body; a type the glob does not match gets the normal answer', async () => {
    const response = await fetch(`${t.sb.url.receiver}/webhooks/stripe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: '{"id":"evt_h","type":"invoice.paid","data":{}}', secret: STRIPE_SECRET }) },
      body: '{"id":"evt_h","type":"invoice.paid","data":{}}',
    });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    expect((await stripeDelivery(t, 'stripe', { id: 'evt_other', type: 'checkout.session.completed' })).status).toBe(200);
    const live = await stripeDelivery(t, 'stripe', { id: 'evt_live', type: 'charge.succeeded', livemode: true });
    expect(live.status).toBe(500);
    expect(live.text).toBe('live mode refused');
  });

  it('never touches a forged delivery or a handshake', async () => {
    const forged = await t.deliver('/webhooks/stripe', '{"id":"evt_f","type":"invoice.paid"}', { 'stripe-signature': 't=1,v1=00' });
    expect(forged.status).toBe(401);
    const body = JSON.stringify({ type: 'url_verification', challenge: 'lab-challenge', token: 'x' });
    const ts = String(Math.floor(Date.now() / 1000));
    const signature = `v0=${createHmac('sha256', SLACK_SECRET).update(`v0:${ts}:${body}`).digest('hex')}`;
    const handshake = await t.deliver('/webhooks/slack', body, { 'content-type': 'application/json', 'x-slack-request-timestamp': ts, 'x-slack-signature': signature });
    expect(handshake.status).toBe(200);
    expect(handshake.json).toEqual({ challenge: 'lab-challenge' });
  });

  it('draws a seeded share: the same seed gives the same decisions', async () => {
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < 20; i++) a.push((await stripeDelivery(t, 'coin-a', { id: `evt_coin_a_${i}`, type: 'x' })).status);
    for (let i = 0; i < 20; i++) b.push((await stripeDelivery(t, 'coin-b', { id: `evt_coin_b_${i}`, type: 'x' })).status);
    expect(a).toEqual(b);
    expect(a).toContain(503);
    expect(a).toContain(200);
  });

  it('holds a delayed answer without holding anything else: 50 in flight, /healthz and other providers answer', async () => {
    const answered: number[] = [];
    const inFlight = Array.from({ length: 50 }, (_, i) =>
      stripeDelivery(t, 'slow', { id: `evt_slow_${i}`, type: 'x' }).then((r) => {
        answered.push(r.status);
        return r;
      }),
    );
    // Every one of them is stored before its answer waits.
    const deadline = Date.now() + 20_000;
    while ((await t.sb.store.listEvents({ provider: 'slow', limit: 60 })).items.length < 50 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect((await t.sb.store.listEvents({ provider: 'slow', limit: 60 })).items).toHaveLength(50);
    expect((await fetch(`${t.sb.url.receiver}/healthz`)).status).toBe(200);
    expect((await t.deliver('/webhooks/plain', '{"quick":true}')).status).toBe(200);
    expect((await stripeDelivery(t, 'stripe', { id: 'evt_quick', type: 'checkout.session.completed' })).status).toBe(200);
    expect(answered).toEqual([]);
    // Stopping sends the held answers at once (nothing waits 30 s to shut down).
    await t.close();
    expect((await Promise.all(inFlight)).map((r) => r.status)).toEqual(Array(50).fill(200));
    t = undefined as never;
  }, 60_000);
});

describe('config', () => {
  it.each([
    [{ status: 99 }, 'providers[0].answer[0].status'],
    [{ status: 600 }, 'providers[0].answer[0].status'],
    [{ status: 503, delay_ms: 30_001 }, 'providers[0].answer[0].delay_ms'],
    [{ status: 503, when: { event_type: 'invoice.{paid,failed}' } }, 'providers[0].answer[0].when.event_type'],
    [{ status: 503, when: { path: 'data..object', equals: 1 } }, 'providers[0].answer[0].when.path'],
    [{ status: 503, probability: 1.5 }, 'providers[0].answer[0].probability'],
    [{ status: 503, probability: -0.1 }, 'providers[0].answer[0].probability'],
  ])('refuses %j naming %s', (rule, path) => {
    expect(() => parseConfig({ providers: [{ name: 'p', kind: 'open', answer: [rule] }] })).toThrow(new RegExp(path.replace(/[[\].]/g, '\\$&')));
  });

  it('applies rules after a hand edit of config.json, keeps them across a refused edit, and the attempt log survives a restart', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'switchboard-lab-'));
    const configPath = join(dataDir, 'config.json');
    const config = (answer: unknown[]) => JSON.stringify({ providers: [{ name: 'stripe', kind: 'stripe', secrets: [{ value: STRIPE_SECRET }], answer }] });
    await writeFile(configPath, config([]));
    const boot = async () => {
      const logger = memoryLogger();
      const sb = createSwitchboard({ dataDir, configPath, token: TEST_TOKEN, logger, rendererDir: null, env: {}, receiverPort: 0, controlPort: 0 });
      await sb.start();
      const run = { sb, logger, dataDir, deliver: async (path: string, body: string | Buffer, headers: Record<string, string> = {}) => {
        const response = await fetch(`${sb.url.receiver}${path}`, { method: 'POST', body, headers });
        const text = await response.text();
        return { status: response.status, text, json: text.startsWith('{') ? JSON.parse(text) : undefined };
      }, close: () => sb.stop() } as unknown as TestSwitchboard;
      return { run, logger };
    };
    const waitFor = async (check: () => Promise<boolean>) => {
      const deadline = Date.now() + 10_000;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error('timed out');
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    try {
      let { run, logger } = await boot();
      expect((await stripeDelivery(run, 'stripe', { id: 'evt_edit', type: 'invoice.paid' })).status).toBe(200);
      await writeFile(configPath, config([{ status: 503, first_attempts: 3 }]));
      await waitFor(async () => logger.lines.some((line) => /reloaded/.test(line)));
      expect((await stripeDelivery(run, 'stripe', { id: 'evt_edit', type: 'invoice.paid' })).status).toBe(503);
      const from = logger.lines.length;
      await writeFile(configPath, config([{ status: 600 }]));
      await waitFor(async () => logger.lines.slice(from).some((line) => /answer\[0\]\.status/.test(line)));
      expect((await stripeDelivery(run, 'stripe', { id: 'evt_edit', type: 'invoice.paid' })).status).toBe(503);
      await run.close();

      await writeFile(configPath, config([{ status: 503, first_attempts: 3 }]));
      ({ run, logger } = await boot());
      // Attempt 4 after the restart: past first_attempts, so the normal answer.
      expect((await stripeDelivery(run, 'stripe', { id: 'evt_edit', type: 'invoice.paid' })).status).toBe(200);
      await run.close();
      ({ run } = await boot());
      const event = (await run.sb.store.listEvents({ external_id: 'evt_edit', limit: 1 })).items[0]!;
      expect(event.attempts).toBe(4);
      expect((await run.sb.store.attemptLog(event)).map((a) => [a.attempt, a.status])).toEqual([
        [1, 200],
        [2, 503],
        [3, 503],
        [4, 200],
      ]);
      expect(JSON.parse(await readFile(configPath, 'utf8')).providers[0].answer).toHaveLength(1);
      await run.close();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
