import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verify as githubVerify } from '@octokit/webhooks-methods';
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../../../src/core/config.js';
import { runSuiteFile } from '../../../src/core/suites/standalone.js';
import type { ApiInput, ApiOutput } from '../../../src/shared/api.js';
import { ChaosProfileSchema, parseChaosSpec } from '../../../src/shared/delivery-lab.js';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { githubDelivery, GITHUB_SECRET, startHandler, STRIPE_SECRET, stripeDelivery, type Handler, type Received } from './handler.js';

/**
 * Suite runs under a chaos profile (DESIGN §14 "Order and chaos", §15), through the UI API and
 * the standalone (CI) run: a real handler whose idempotency the test controls (409 to a delivery
 * it already took), every copy checked by the provider's own SDK — Stripe's constructEvent,
 * GitHub's webhooks-methods verify — with a fresh signature and the same delivery id.
 */

const CONFIG = {
  providers: [
    { name: 'stripe', kind: 'stripe', secrets: [{ env: 'STRIPE_SECRET' }] },
    { name: 'github', kind: 'github', secrets: [{ env: 'GITHUB_SECRET' }] },
  ],
  replay: { timeout_ms: 2_000 },
} satisfies ConfigInput;

const stripe = new Stripe('sk_test_unused');
let t: TestSwitchboard;
let handler: Handler;
let dir: string;
const stripeIds: number[] = [];
const githubIds: number[] = [];

const api = <M extends keyof typeof t.sb.api>(method: M, input: ApiInput<M>) => t.sb.api[method](input as never) as Promise<ApiOutput<M>>;
const chaos = (spec: string) => ChaosProfileSchema.parse(parseChaosSpec(spec));

async function run(name: string, input: Omit<ApiInput<'runSuite'>, 'name'> = {}) {
  const { run: started } = await api('runSuite', { name, ...input });
  for (;;) {
    const current = await api('getSuiteRun', { id: started.id, diffs: true });
    if (current.run.status !== 'running') return current;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The Stripe event id and signature timestamp of a received request, after checking it with Stripe's library. */
function stripeCheck(request: Received): { id: string; amount: number; t: number } {
  const event = stripe.webhooks.constructEvent(request.body, request.headers['stripe-signature']!, STRIPE_SECRET);
  return { id: event.id, amount: (event.data.object as { amount: number }).amount, t: Number(/t=(\d+)/.exec(request.headers['stripe-signature']!)![1]) };
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

beforeAll(async () => {
  [t, handler] = await Promise.all([startTestSwitchboard(CONFIG, { env: { STRIPE_SECRET, GITHUB_SECRET } }), startHandler()]);
  dir = await mkdtemp(join(tmpdir(), 'switchboard-suite-chaos-'));
  for (let i = 1; i <= 6; i++) {
    const { body, headers } = stripeDelivery('invoice.paid', i * 100);
    stripeIds.push((await t.deliver('/webhooks/stripe', body, headers)).json.id);
  }
  for (const ref of ['refs/heads/main', 'refs/heads/dev']) {
    const { body, headers } = await githubDelivery('push', { ref });
    githubIds.push((await t.deliver('/webhooks/github', body, headers)).json.id);
  }
  await api('saveSuite', { name: 'pay', event_ids: stripeIds });
  await api('saveSuite', { name: 'gh', event_ids: githubIds });
  // The first runs learn noise and become the expectations (no chaos: each case sent twice).
  expect((await run('pay', { target_url: handler.url('/stripe') })).run).toMatchObject({ status: 'done', new: 6, chaos: null });
  expect((await run('gh', { target_url: handler.url('/github') })).run).toMatchObject({ status: 'done', new: 2 });
  handler.reset();
});
afterAll(async () => {
  await handler?.close();
  await t?.close();
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => handler.reset());

describe('duplicates', () => {
  it('every copy is re-signed (Stripe’s own check passes) with the same event id; an idempotent handler passes, said per case', async () => {
    const { run: done, cases } = await run('pay', { chaos: chaos('duplicate=1,copies=2,after=0,seed=7') });
    expect(done).toMatchObject({ status: 'done', pass: 6, changed: 0, chaos: 'duplicate=1,copies=2,after=0,seed=7' });
    expect(handler.received).toHaveLength(18);
    expect(handler.received.every((request) => request.verified && request.status === 200)).toBe(true);
    const byEvent = groupBy(handler.received.map(stripeCheck), (check) => check.id);
    expect([...byEvent.values()].map((copies) => copies.length)).toEqual([3, 3, 3, 3, 3, 3]);
    expect(cases.map((c) => [c.verdict, c.idempotency, c.chaos])).toEqual(
      Array.from({ length: 6 }, (_, i) => ['pass', 'idempotent', { sent_order: i + 1, reordered: false, delay_ms: 0, duplicates: [200, 200] }]),
    );
    expect((await api('listSuiteRuns', { name: 'pay' })).runs[0]).toMatchObject({ id: done.id, chaos: 'duplicate=1,copies=2,after=0,seed=7' });
  });

  it('a handler that refuses a repeated delivery is not idempotent: every case changed with the reason, though its first answer matched', async () => {
    handler.behaviour.rejectRepeats = true;
    const { run: done, cases } = await run('pay', { chaos: chaos('duplicate=1,after=0,seed=1'), concurrency: 3 });
    expect(done).toMatchObject({ status: 'done', pass: 0, changed: 6 });
    for (const result of cases) {
      expect(result).toMatchObject({ verdict: 'changed', idempotency: 'not_idempotent', status: 200, diff: [], chaos: { duplicates: [409] } });
      expect(result.reason).toBe('not idempotent: the first send got 200, duplicate 1 got 409 — a provider would keep retrying or disable the endpoint');
    }
    expect(handler.received.every((request) => request.verified)).toBe(true);
  });

  it('GitHub: each copy verified by @octokit/webhooks-methods, the same X-GitHub-Delivery, a fresh signature over the same body', async () => {
    handler.behaviour.rejectRepeats = true;
    const { cases } = await run('gh', { chaos: chaos('duplicate=1,copies=1,after=0,seed=3') });
    expect(cases.map((c) => [c.verdict, c.idempotency, c.chaos?.duplicates])).toEqual([
      ['changed', 'not_idempotent', [409]],
      ['changed', 'not_idempotent', [409]],
    ]);
    expect(handler.received).toHaveLength(4);
    for (const request of handler.received) expect(await githubVerify(GITHUB_SECRET, request.body.toString('utf8'), request.headers['x-hub-signature-256']!)).toBe(true);
    const [first, copy] = handler.received;
    expect(copy!.headers['x-github-delivery']).toBe(first!.headers['x-github-delivery']);
    expect(handler.received[2]!.headers['x-github-delivery']).not.toBe(first!.headers['x-github-delivery']);
  });

  it('a case with a duplicate drawn and one without: only the first gets an idempotency verdict', async () => {
    const { cases } = await run('pay', { chaos: chaos('duplicate=0.5,after=0,seed=5') });
    const duplicated = cases.filter((c) => c.chaos!.duplicates.length > 0);
    expect(duplicated.length).toBeGreaterThan(0);
    expect(duplicated.length).toBeLessThan(6);
    for (const c of cases) expect(c.idempotency).toBe(c.chaos!.duplicates.length > 0 ? 'idempotent' : null);
  });
});

describe('order, delay and the seed', () => {
  it('no seed given: one is drawn and recorded; the same seed repeats every decision, at any concurrency', async () => {
    const first = await run('pay', { chaos: chaos('duplicate=0.5,after=0,reorder=3,delay=0-40') });
    const seed = /,seed=(\d+)$/.exec(first.run.chaos!)?.[1];
    expect(seed).toBeDefined();
    expect(first.run.chaos).toBe(`duplicate=0.5,copies=1,after=0,reorder=3,delay=0-40,seed=${seed}`);
    // The order the handler saw the first sends in (concurrency 1) is the planned order.
    const firstSends = [...new Map(handler.received.map((request) => [stripeCheck(request).amount, request])).keys()];
    const planned = [...first.cases].sort((a, b) => a.chaos!.sent_order - b.chaos!.sent_order).map((c) => c.case * 100);
    expect(firstSends).toEqual(planned);

    const again = await run('pay', { chaos: chaos(first.run.chaos!), concurrency: 4 });
    expect(again.run.chaos).toBe(first.run.chaos);
    expect(again.cases.map((c) => c.chaos)).toEqual(first.cases.map((c) => c.chaos));
  });

  it('reorders within windows: every case stays in its window of 3, and one sent out of place is marked', async () => {
    // Seed 2 shuffles both windows (checked by the planner's own test of the same draws).
    const { cases } = await run('pay', { chaos: chaos('reorder=3,seed=2') });
    for (const c of cases) expect(Math.ceil(c.chaos!.sent_order / 3)).toBe(Math.ceil(c.case / 3));
    for (const c of cases) expect(c.chaos!.reordered).toBe(c.chaos!.sent_order !== c.case);
    expect(cases.some((c) => c.chaos!.reordered)).toBe(true);
    expect(cases.every((c) => c.verdict === 'pass')).toBe(true);
  });

  it('waits each case’s delay before its first send', async () => {
    const { cases, run: done } = await run('pay', { chaos: chaos('delay=120,seed=1') });
    expect(cases.every((c) => c.chaos!.delay_ms === 120 && c.verdict === 'pass')).toBe(true);
    const gaps = handler.received.slice(1).map((request, i) => request.at - handler.received[i]!.at);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(110);
    expect(done.duration_ms).toBeGreaterThanOrEqual(6 * 115);
  });

  it('a cancel during a delay stops the run at once: the case waiting is not sent', async () => {
    const { run: started } = await api('runSuite', { name: 'pay', chaos: chaos('delay=3000,seed=1') });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const cancelledAt = Date.now();
    expect(t.sb.suites.cancel(started.id)).toBe(true);
    let current;
    do current = await api('getSuiteRun', { id: started.id });
    while (current.run.status === 'running');
    expect(Date.now() - cancelledAt).toBeLessThan(1_000);
    expect(current.run).toMatchObject({ status: 'cancelled', pass: 0, changed: 0, failed: 0 });
    expect(current.cases).toEqual([]);
    expect(handler.received).toHaveLength(0);
  });
});

describe('the standalone run (CI, no instance)', () => {
  it('sends every duplicate with a fresh signature timestamp, says the drawn seed, and judges idempotency', async () => {
    const file = join(dir, 'pay.suite.ndjson');
    await writeFile(file, (await api('exportSuite', { name: 'pay' })).ndjson);
    const config = join(dir, 'ci.json');
    await writeFile(config, JSON.stringify({ providers: [{ name: 'stripe', kind: 'stripe', secrets: [{ env: 'CI_STRIPE' }] }] }));
    // A clock two seconds further on at every read: each signature carries its own timestamp.
    let clock = Date.now();
    handler.behaviour.rejectRepeats = true;
    const result = await runSuiteFile({
      file,
      target: handler.url('/stripe'),
      configPath: config,
      accept: false,
      concurrency: 2,
      chaos: chaos('duplicate=1,copies=2,after=0'),
      env: { CI_STRIPE: STRIPE_SECRET },
      version: 'test',
      now: () => (clock += 2_000),
    });
    expect(result.chaos).toMatch(/^duplicate=1,copies=2,after=0,seed=\d+$/);
    expect(result).toMatchObject({ pass: 0, changed: 6 });
    expect(result.cases.every((c) => c.idempotency === 'not_idempotent' && c.chaos!.duplicates.join() === '409,409')).toBe(true);
    expect(handler.received).toHaveLength(18);
    const checks = handler.received.map(stripeCheck);
    for (const copies of groupBy(checks, (check) => check.id).values()) {
      expect(copies).toHaveLength(3);
      expect(new Set(copies.map((copy) => copy.t)).size).toBe(3);
    }
  });
});
