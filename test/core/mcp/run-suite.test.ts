import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../../../src/core/config.js';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { connectMcp, outputSize, type McpTestClient } from '../../helpers/mcp.js';
import { startHandler, STRIPE_SECRET, stripeDelivery, type Handler } from '../suites/handler.js';

/**
 * run_suite (DESIGN §6, §14) through the official MCP SDK client: an agent makes a suite from
 * event ids, runs it against a handler that checks Stripe signatures with Stripe's library,
 * and reads a bounded answer — changed and failed cases first, at most 50 of them, at most 10
 * differences each — validated against the published schema (docs/openspec).
 */

/** Setting a suite up through the UI API: MCP runs share the token's rate limit (5, then one per 2 s). */
async function runThroughApi(name: string, input: { event_ids?: number[]; target_url?: string } = {}): Promise<void> {
  if (input.event_ids) await t.sb.api.saveSuite({ name, event_ids: input.event_ids });
  const { run } = await t.sb.api.runSuite({ name, ...(input.target_url ? { target_url: input.target_url } : {}) });
  while ((await t.sb.api.getSuiteRun({ id: run.id })).run.status === 'running') await new Promise((resolve) => setTimeout(resolve, 20));
}

const CONFIG = { providers: [{ name: 'stripe', kind: 'stripe', secrets: [{ env: 'STRIPE_SECRET' }] }], replay: { timeout_ms: 1_500 } } satisfies ConfigInput;

let t: TestSwitchboard;
let handler: Handler;
let mcp: McpTestClient;
const ids: number[] = [];

beforeAll(async () => {
  [t, handler] = await Promise.all([startTestSwitchboard(CONFIG, { env: { STRIPE_SECRET } }), startHandler()]);
  for (let i = 0; i < 60; i++) {
    const { body, headers } = stripeDelivery(i % 2 ? 'invoice.paid' : 'charge.succeeded', 100 + i);
    ids.push((await t.deliver('/webhooks/stripe', body, headers)).json.id);
  }
  mcp = await connectMcp(t);
});
afterAll(async () => {
  await mcp?.close();
  await handler?.close();
  await t?.close();
});
afterEach(() => handler.reset());

describe('run_suite', () => {
  it('keeps its tools/list entry lean (the whole list is in every agent’s context)', async () => {
    const { tools } = await mcp.client.listTools();
    const entry = tools.find((tool) => tool.name === 'run_suite');
    expect(JSON.stringify(entry).length).toBeLessThan(2_550);
  });

  it('makes the suite from event ids and runs it: the first run is new, learns noise, and becomes the expectation', async () => {
    const result = await mcp.ok('run_suite', { name: 'agent', event_ids: ids.slice(0, 3), target_url: handler.url('/stripe') });
    expect(result.run).toMatchObject({ suite: 'agent', target_url: handler.url('/stripe'), new: 3, pass: 0, changed: 0, failed: 0, learned_ignores: expect.arrayContaining(['$.ts', '$.request_id']) });
    expect(result.cases.map((c: { case: number; verdict: string }) => [c.case, c.verdict])).toEqual([[1, 'new'], [2, 'new'], [3, 'new']]);
    expect(handler.received.every((request) => request.verified)).toBe(true);
    expect((await mcp.ok('run_suite', { name: 'agent' })).run).toMatchObject({ pass: 3, changed: 0 });
  });

  it('puts changed and failed cases first, with their differences', async () => {
    await runThroughApi('agent', { event_ids: ids.slice(0, 6), target_url: handler.url('/stripe') });
    handler.behaviour.amountFactor = 2;
    handler.behaviour.hangOn.add('charge.succeeded');
    // Only some cases change: the handler hangs on the even ones (failed) and doubles the amount elsewhere.
    const result = await mcp.ok('run_suite', { name: 'agent' });
    expect(result.run).toMatchObject({ changed: 3, failed: 3, pass: 0 });
    expect(result.cases.map((c: { verdict: string }) => c.verdict)).toEqual(['changed', 'changed', 'changed', 'failed', 'failed', 'failed']);
    expect(result.cases[0]).toEqual({ case: 2, provider: 'stripe', event_type: 'invoice.paid', verdict: 'changed', status: 200, expected_status: 200, diff: [{ path: '$.amount', change: 'changed', before: 101, after: 202 }] });
    expect(result.cases[3]).toMatchObject({ case: 1, verdict: 'failed', expected_status: 200, reason: 'no complete response within 1500 ms (replay.timeout_ms)' });
    expect(result.cases[3]).not.toHaveProperty('status');
  });

  it('is bounded: at most 50 cases, at most 10 differences each', async () => {
    await runThroughApi('wide', { event_ids: ids.slice(0, 60), target_url: handler.url('/stripe') });
    // The handler now answers something else entirely: 60+ differences in every case.
    const result = await mcp.call('run_suite', { name: 'wide', target_url: handler.url('/many') });
    const content = result.structuredContent as { run: { id: number; changed: number }; cases: { diff?: unknown[]; diff_truncated?: boolean }[] };
    expect(content.run.changed).toBe(60);
    expect(content.cases).toHaveLength(50);
    expect(content.cases[0]!.diff).toHaveLength(10);
    expect(content.cases.every((c) => c.diff_truncated === true && (c.diff?.length ?? 0) <= 10)).toBe(true);
    expect((await t.sb.suites.getRun(content.run.id, { diffs: true })).cases[0]!.diff).toHaveLength(50);
    expect(outputSize(result)).toBeLessThan(100_000);
  });

  it('says what is wrong: an unknown suite names the existing ones; a bad name, a chaos profile and a refused target', async () => {
    expect(await mcp.error('run_suite', { name: 'nope' }, 'not_found')).toMatch(/there is no suite "nope"; the suites are: agent, wide/);
    expect(await mcp.error('run_suite', { name: 'Bad Name' }, 'invalid_argument')).toMatch(/not a suite name/);
    expect(await mcp.error('run_suite', { name: 'agent', chaos: 'dupe=1' }, 'invalid_argument')).toBe('chaos: unknown part "dupe" (duplicate, copies, after, reorder, delay, seed)');
    expect(await mcp.error('run_suite', { name: 'agent', chaos: 'duplicate=2' }, 'invalid_argument')).toMatch(/^chaos: duplicate\.probability: /);
    expect(await mcp.error('run_suite', { name: 'agent', event_ids: [999_999] }, 'invalid_argument')).toMatch(/no event 999999/);
    expect(await mcp.error('run_suite', { name: 'agent', event_ids: [1.5] }, 'invalid_argument')).toMatch(/1.5 is not an event id/);
    const refused = await mcp.ok('run_suite', { name: 'agent', target_url: 'http://example.com/hooks' });
    expect(refused.run.failed).toBe(6);
    expect(refused.cases[0].reason).toMatch(/refused by the target guard, nothing sent/);
    expect(handler.received).toHaveLength(0);
  });

  it('chaos: duplicates each re-signed (Stripe’s own check passes); a handler that refuses a repeat is not_idempotent, changed, with the reason; the run says its seed', async () => {
    // Runs share the token's rate limit with the tests above: wait for a turn.
    const runPatiently = async (args: Record<string, unknown>) => {
      for (;;) {
        const result = await mcp.call('run_suite', args);
        if (!result.isError || (result.structuredContent as { code: string }).code !== 'rate_limited') return result.structuredContent as Record<string, any>;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    };
    await runThroughApi('dup', { event_ids: ids.slice(0, 2), target_url: handler.url('/stripe') });
    handler.reset();
    handler.behaviour.rejectRepeats = true;
    const result = await runPatiently({ name: 'dup', chaos: 'duplicate=1,after=0' });
    expect(result.run).toMatchObject({ changed: 2, pass: 0, chaos: expect.stringMatching(/^duplicate=1,copies=1,after=0,seed=\d+$/) });
    for (const c of result.cases) {
      expect(c).toMatchObject({ verdict: 'changed', idempotency: 'not_idempotent', status: 200 });
      expect(c.reason).toMatch(/^not idempotent: the first send got 200, duplicate 1 got 409/);
    }
    expect(handler.received).toHaveLength(4);
    expect(handler.received.every((request) => request.verified)).toBe(true);
  });
});
