import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { guardedAgent } from '../../../src/core/replay/replay.js';
import { IgnoreRules } from '../../../src/core/suites/json-paths.js';
import { RunPlanner, runCases, type CaseOutcome, type RunCase } from '../../../src/core/suites/runner.js';
import { chaosFromSpec, chaosWithSeed, ChaosProfileSchema, formatChaosSpec, parseChaosSpec, type ChaosProfile } from '../../../src/shared/delivery-lab.js';

/**
 * The planner of a suite run (DESIGN §14 "Order and chaos", §15): every decision — a window's
 * shuffle, each case's delay and duplicates — drawn in one place, in suite order, so the same
 * seed gives the same run however the cases come in (steps of any size) and however many are
 * sent at once. And the profile's CLI spelling, both ways.
 */

const profile = (spec: string) => chaosWithSeed(ChaosProfileSchema.parse(parseChaosSpec(spec)));

/** Plans `count` cases fed in steps of `step`; returns [position, planned] in send order. */
function plan(chaos: ChaosProfile & { seed: number }, count: number, step: number) {
  const planner = new RunPlanner<number>({ learnNoise: false, chaos });
  const out = [];
  for (let i = 0; i < count; i += step) out.push(...planner.take(Array.from({ length: Math.min(step, count - i) }, (_, k) => i + k + 1)));
  out.push(...planner.finish());
  return out.map(({ item, planned }) => ({ position: item, ...planned.chaos! }));
}

describe('RunPlanner', () => {
  it('the same seed gives the same plan, whatever the step size', () => {
    const chaos = profile('duplicate=0.5,copies=2,after=10,reorder=5,delay=0-500,seed=42');
    const reference = plan(chaos, 23, 50);
    for (const step of [1, 3, 5, 7, 22]) expect(plan(chaos, 23, step)).toEqual(reference);
    expect(plan(profile('duplicate=0.5,copies=2,after=10,reorder=5,delay=0-500,seed=43'), 23, 50)).not.toEqual(reference);
    // Duplicates drawn with probability 0.5 and delays across the range: both kinds of decision show up.
    expect(new Set(reference.map((c) => c.copies))).toEqual(new Set([0, 2]));
    expect(reference.every((c) => c.delayMs >= 0 && c.delayMs <= 500)).toBe(true);
    expect(new Set(reference.map((c) => c.delayMs)).size).toBeGreaterThan(10);
  });

  it('reorders within windows of N by suite position only, marking what left its place; sent_order counts the sends', () => {
    const planned = plan(profile('reorder=5,seed=7'), 23, 4);
    expect(planned.map((c) => c.sentOrder)).toEqual(Array.from({ length: 23 }, (_, i) => i + 1));
    for (let window = 0; window < 5; window++) {
      const slice = planned.slice(window * 5, window * 5 + 5);
      expect(slice.map((c) => c.position).sort((a, b) => a - b)).toEqual(Array.from({ length: Math.min(5, 23 - window * 5) }, (_, i) => window * 5 + i + 1));
    }
    for (const c of planned) expect(c.reordered).toBe(c.position !== c.sentOrder);
    expect(planned.some((c) => c.reordered)).toBe(true);
    expect(planned.every((c) => c.copies === 0 && c.delayMs === 0)).toBe(true);
  });

  it('without chaos: suite order, one send (two when learning noise), no chaos facts', () => {
    const planner = new RunPlanner<number>({ learnNoise: true, chaos: null });
    expect(planner.take([1, 2, 3])).toEqual([1, 2, 3].map((item) => ({ item, planned: { sends: 2, chaos: null } })));
    expect(planner.holding).toBe(false);
    expect(planner.finish()).toEqual([]);
  });

  it('holds a window’s first cases until it is complete', () => {
    const planner = new RunPlanner<number>({ learnNoise: false, chaos: profile('reorder=3,seed=1') });
    expect(planner.take([1, 2])).toEqual([]);
    expect(planner.holding).toBe(true);
    expect(planner.take([3, 4]).map(({ item }) => item).sort()).toEqual([1, 2, 3]);
    expect(planner.finish().map(({ item }) => item)).toEqual([4]);
  });
});

describe('the chaos profile in the CLI spelling', () => {
  it('round-trips: formatChaosSpec(parse(spec)) is the spec, and parses back to the same profile', () => {
    for (const spec of ['duplicate=1,copies=2,after=100,reorder=5,delay=0-500,seed=42', 'duplicate=0.25,copies=1,after=0', 'reorder=2', 'delay=300', 'seed=9', 'delay=10-20,seed=-3']) {
      const parsed = ChaosProfileSchema.parse(parseChaosSpec(spec));
      expect(formatChaosSpec(parsed)).toBe(spec);
      expect(ChaosProfileSchema.parse(parseChaosSpec(formatChaosSpec(parsed)))).toEqual(parsed);
    }
    // Defaults are written out: what ran is said in full.
    expect(formatChaosSpec(ChaosProfileSchema.parse(parseChaosSpec('duplicate=1,seed=7')))).toBe('duplicate=1,copies=1,after=100,seed=7');
  });

  it('a seed is drawn when none is given, and kept when one is', () => {
    expect(chaosWithSeed({ seed: 5 }).seed).toBe(5);
    const drawn = chaosWithSeed({ reorder_window: 3 });
    expect(Number.isSafeInteger(drawn.seed)).toBe(true);
    expect(drawn).toMatchObject({ reorder_window: 3 });
  });

  it('a bad spec is one line naming the bad part', () => {
    expect(chaosFromSpec('duplicate=2')).toEqual({ error: expect.stringMatching(/^--chaos: duplicate\.probability: /) });
    expect(chaosFromSpec('dupe=1')).toEqual({ error: '--chaos: unknown part "dupe" (duplicate, copies, after, reorder, delay, seed)' });
    expect(chaosFromSpec('delay=500-100', 'chaos')).toEqual({ error: expect.stringMatching(/^chaos: delay_ms: min must not exceed max/) });
    expect(chaosFromSpec('seed=x')).toEqual({ error: '--chaos seed=x: not a number' });
  });

  it('pasted oddities come back as one short escaped line, never echoed whole', () => {
    const oneLine = (spec: string) => {
      const result = chaosFromSpec(spec, 'Chaos');
      expect(result).toHaveProperty('error');
      const error = (result as { error: string }).error;
      expect(error).not.toMatch(/[\u0000-\u001f]/);
      expect(error.length).toBeLessThan(200);
      return error;
    };
    expect(oneLine('seed=1\u0000\u0000')).toBe('Chaos "seed=1\\u0000\\u0000": not a number');
    expect(oneLine('delay=-5')).toBe('Chaos delay=-5: not a number');
    expect(oneLine(`${'x'.repeat(300)}=1`)).toBe(`Chaos: unknown part "${'x'.repeat(40)}…" (duplicate, copies, after, reorder, delay, seed)`);
    expect(oneLine('duplicate=1\nreorder=3')).toMatch(/^Chaos "duplicate=1\\nreorder=3": not a number$/);
    expect(oneLine(`seed=1,${'a'.repeat(1024 * 1024)}`)).toMatch(/^Chaos: 1,048,583 characters is not a profile \(at most 500; /);
  });
});

describe('runCases with the planner, against a real server', () => {
  /** A server that answers 200 with the body's position, counting what is in flight. */
  async function startEcho() {
    const seen: number[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        seen.push(JSON.parse(Buffer.concat(chunks).toString()).position);
        setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), 5);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { seen, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  const LOOPBACK = ['127.0.0.1'];
  const cases = (count: number): RunCase[] =>
    Array.from({ length: count }, (_, index) => ({
      id: index + 1,
      position: index + 1,
      provider: 'plain',
      event_type: 'thing.happened',
      trust_mode: 'open',
      content_type: 'application/json',
      headers: { 'content-type': 'application/json' },
      payload: new TextEncoder().encode(JSON.stringify({ position: index + 1 })),
      expectation: null,
    }));
  /** Steps of `size` cases, as the service and the standalone run page them. */
  function* steps(all: RunCase[], size: number) {
    for (let i = 0; i < all.length; i += size) yield all.slice(i, i + size);
  }

  async function runAll(options: { count: number; step: number; concurrency: number; chaos: (ChaosProfile & { seed: number }) | null }) {
    const echo = await startEcho();
    const agent = guardedAgent({ allowHosts: () => LOOPBACK, connectTimeoutMs: () => 2_000 });
    const stored: CaseOutcome[][] = [];
    try {
      const totals = await runCases(steps(cases(options.count), options.step), {
        targetUrl: echo.url,
        allowHosts: LOOPBACK,
        timeoutMs: 2_000,
        concurrency: options.concurrency,
        learnNoise: false,
        chaos: options.chaos,
        rules: { ignore: new IgnoreRules([]), compareHeaders: [] },
        agent,
        version: 'test',
        now: Date.now,
        secrets: () => [],
        provider: () => ({ provider: undefined }),
        onStep: (outcomes) => void stored.push(outcomes),
      });
      return { totals, stored, seen: echo.seen };
    } finally {
      await agent.close();
      await echo.close();
    }
  }

  it('a reorder window wider than a step: cases are held across steps, every one is sent and stored in its step, in suite order', async () => {
    const { totals, stored, seen } = await runAll({ count: 23, step: 2, concurrency: 3, chaos: profile('reorder=7,seed=3') });
    expect(totals).toMatchObject({ done: 23, counts: { new: 23 } });
    expect(stored.map((step) => step.map((outcome) => outcome.position))).toEqual(Array.from({ length: 12 }, (_, i) => (i < 11 ? [2 * i + 1, 2 * i + 2] : [23])));
    const byPosition = new Map(stored.flat().map((outcome) => [outcome.position, outcome.chaos!]));
    for (const [position, facts] of byPosition) expect(Math.ceil(facts.sent_order / 7)).toBe(Math.ceil(position / 7));
    expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: 23 }, (_, i) => i + 1));
    // The same seed, one at a time and in other steps: the same decisions.
    const again = await runAll({ count: 23, step: 5, concurrency: 1, chaos: profile('reorder=7,seed=3') });
    expect(new Map(again.stored.flat().map((outcome) => [outcome.position, outcome.chaos!]))).toEqual(byPosition);
    expect(again.seen).toEqual([...byPosition].sort((a, b) => a[1].sent_order - b[1].sent_order).map(([position]) => position));
  });

  it('more workers than cases in flight (steps of one): the idle ones wait for a case to end, the run finishes', async () => {
    const { totals, seen } = await runAll({ count: 9, step: 1, concurrency: 8, chaos: null });
    expect(totals).toMatchObject({ done: 9, counts: { new: 9 } });
    expect(seen).toHaveLength(9);
  });
});
