import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../../../src/core/config.js';
import type { ApiInput, ApiOutput } from '../../../src/shared/api.js';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { githubDelivery, GITHUB_SECRET, startHandler, STRIPE_SECRET, stripeDelivery, type Handler } from './handler.js';

/**
 * Suites in a running instance (DESIGN §14), through the UI API: saved from stored events, run
 * against a real handler that verifies every case with Stripe's and GitHub's own libraries,
 * judged, accepted, exported and imported.
 */

const CONFIG = {
  providers: [
    { name: 'stripe', kind: 'stripe', secrets: [{ env: 'STRIPE_SECRET' }] },
    { name: 'github', kind: 'github', secrets: [{ env: 'GITHUB_SECRET' }] },
  ],
  replay: { timeout_ms: 1_500 },
} satisfies ConfigInput;

let t: TestSwitchboard;
let handler: Handler;
const stripeIds: number[] = [];
const githubIds: number[] = [];

beforeAll(async () => {
  [t, handler] = await Promise.all([startTestSwitchboard(CONFIG, { env: { STRIPE_SECRET, GITHUB_SECRET } }), startHandler()]);
  for (const [type, amount] of [['checkout.session.completed', 1000], ['invoice.paid', 2500], ['charge.refunded', 700]] as const) {
    const { body, headers } = stripeDelivery(type, amount);
    const answer = await t.deliver('/webhooks/stripe', body, headers);
    expect(answer.status).toBe(200);
    stripeIds.push(answer.json.id);
  }
  for (const event of ['push', 'issues']) {
    const { body, headers } = await githubDelivery(event, { action: event === 'issues' ? 'opened' : undefined, ref: 'refs/heads/main' });
    const answer = await t.deliver('/webhooks/github', body, headers);
    expect(answer.status).toBe(200);
    githubIds.push(answer.json.id);
  }
});
afterAll(async () => {
  await handler?.close();
  await t?.close();
});
afterEach(async () => {
  handler.reset();
  await t.sb.updateConfig(CONFIG);
});

const api = <M extends keyof typeof t.sb.api>(method: M, input: ApiInput<M>) => t.sb.api[method](input as never) as Promise<ApiOutput<M>>;

/** Starts a run and waits for it, as the UI and the CLI do (runSuite answers at once). */
async function run(name: string, input: Omit<ApiInput<'runSuite'>, 'name'> = {}) {
  const { run: started } = await api('runSuite', { name, ...input });
  expect(started.status).toBe('running');
  for (;;) {
    const current = await api('getSuiteRun', { id: started.id, diffs: true });
    if (current.run.status !== 'running') return current;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error('expected a failure');
}

describe('a suite of Stripe events', () => {
  it('is saved from the list filters (oldest first) as copies of the events', async () => {
    const saved = await api('saveSuite', { name: 'payments', filter: { provider: 'stripe' } });
    expect(saved).toMatchObject({ created: true, suite: { name: 'payments', cases: 3, expectations: 0, ignore: [], last_run: null } });
    const { cases } = await api('getSuite', { name: 'payments' });
    expect(cases.map((c) => [c.case, c.source_event_id, c.event_type])).toEqual([
      [1, stripeIds[0], 'checkout.session.completed'],
      [2, stripeIds[1], 'invoice.paid'],
      [3, stripeIds[2], 'charge.refunded'],
    ]);
  });

  it('first run: every case re-signed (the handler’s Stripe check passes), sent twice, new, and it becomes the expectation with its noise learned', async () => {
    const { run: first, cases } = await run('payments', { target_url: handler.url('/stripe') });
    expect(first).toMatchObject({ status: 'done', accepted: true, new: 3, pass: 0, changed: 0, failed: 0, total: 3, done: 3, concurrency: 1 });
    expect(first.learned_ignores.sort()).toEqual(['$.request_id', '$.ts']);
    expect(handler.received).toHaveLength(6);
    expect(handler.received.every((request) => request.verified)).toBe(true);
    // Back to back, in suite order, each with a fresh signature.
    expect(handler.received.map((request) => JSON.parse(request.body.toString()).type)).toEqual([
      'checkout.session.completed', 'checkout.session.completed', 'invoice.paid', 'invoice.paid', 'charge.refunded', 'charge.refunded',
    ]);
    expect(handler.received[0]!.headers['x-switchboard-replay']).toBe(String(stripeIds[0]));
    expect(cases.every((c) => c.verdict === 'new' && c.status === 200 && c.resigned)).toBe(true);
    const { suite } = await api('getSuite', { name: 'payments' });
    expect(suite).toMatchObject({ expectations: 3, ignore: expect.arrayContaining(['$.ts', '$.request_id']) });
  });

  it('second run passes without any hand-written ignore, sending each case once', async () => {
    const { run: second, cases } = await run('payments');
    expect(second).toMatchObject({ status: 'done', accepted: false, pass: 3, new: 0, changed: 0, failed: 0, target_url: handler.url('/stripe') });
    expect(handler.received).toHaveLength(3);
    expect(cases.map((c) => [c.verdict, c.expected_status, c.status, c.diff])).toEqual([
      ['pass', 200, 200, []],
      ['pass', 200, 200, []],
      ['pass', 200, 200, []],
    ]);
  });

  it('a regression shows as changed, with the differences by JSONPath; accepting it re-learns and makes it the expectation', async () => {
    handler.behaviour.amountFactor = 2;
    const { run: changed, cases } = await run('payments', { concurrency: 3 });
    expect(changed).toMatchObject({ changed: 3, pass: 0, concurrency: 3 });
    expect(cases[0]).toMatchObject({ verdict: 'changed', diff_count: 1, diff: [{ path: '$.amount', change: 'changed', before: 1000, after: 2000 }] });

    const detail = await api('getSuiteRun', { id: changed.id, case: 1 });
    expect(detail.detail).toMatchObject({ case: 1, expected: { status: 200 }, got: { status: 200 } });
    expect(JSON.parse(detail.detail!.expected!.body.text).amount).toBe(1000);
    expect(JSON.parse(detail.detail!.got!.body.text).amount).toBe(2000);

    handler.received = [];
    const accepted = await api('acceptSuiteRun', { id: changed.id });
    expect(accepted).toMatchObject({ run: { id: changed.id, accepted: true }, learned_ignores: [], warning: null });
    expect(handler.received).toHaveLength(3); // each case once more, to learn noise
    const { run: after } = await run('payments');
    expect(after).toMatchObject({ pass: 3, changed: 0 });

    // Back to what it was, in one go: a run made with accept is the expectation (sent twice).
    handler.behaviour.amountFactor = 1;
    handler.received = [];
    const reverted = await run('payments', { accept: true });
    expect(reverted.run).toMatchObject({ accepted: true, changed: 3, learned_ignores: [] });
    expect(handler.received).toHaveLength(6);
    expect((await run('payments')).run).toMatchObject({ pass: 3 });
  });
});

describe('bad input and bad days', () => {
  it('an unknown suite is not_found and names the suites that exist', async () => {
    const error = await failure(api('runSuite', { name: 'nope', target_url: handler.url('/stripe') }));
    expect(error).toMatchObject({ code: 'not_found', message: expect.stringContaining('the suites are: payments') });
    expect((await failure(api('getSuite', { name: 'nope' }))).message).toMatch(/payments/);
  });

  it('a target the guard refuses fails every case with the cause, and sends nothing', async () => {
    const { run: refused, cases } = await run('payments', { target_url: 'http://169.254.169.254/latest' });
    expect(refused).toMatchObject({ status: 'done', failed: 3, pass: 0 });
    expect(cases[0]!.reason).toMatch(/refused by the target guard, nothing sent: .*link-local/);
    const notAllowed = await run('payments', { target_url: 'http://example.com/hooks' });
    expect(notAllowed.cases[0]!.reason).toMatch(/not in replay.allow_hosts/);
    expect(handler.received).toHaveLength(0);
    expect((await failure(api('runSuite', { name: 'payments', target_url: 'ftp://localhost/' }))).code).toBe('invalid_argument');
  });

  it('a handler that never answers times out per case, and the run goes on', async () => {
    handler.behaviour.hangOn.add('invoice.paid');
    const { run: slow, cases } = await run('payments', { target_url: handler.url('/stripe') });
    expect(slow).toMatchObject({ status: 'done', pass: 2, failed: 1 });
    expect(cases[1]).toMatchObject({ verdict: 'failed', status: null, reason: 'no complete response within 1500 ms (replay.timeout_ms)' });
    expect(cases[2]!.verdict).toBe('pass');
  });

  it('a case whose provider has no secret is sent unsigned with a warning, and the handler’s own check refuses it', async () => {
    await api('saveSuite', { name: 'repo', event_ids: [githubIds[1]!, githubIds[0]!] });
    const first = await run('repo', { target_url: handler.url('/github') });
    expect(first.run).toMatchObject({ new: 2, accepted: true });
    expect(first.cases.map((c) => c.event_type)).toEqual(['issues.opened', 'push']);
    expect(first.run.learned_ignores).toEqual(['$.at']);
    expect(handler.received.every((request) => request.verified)).toBe(true);

    await t.sb.updateConfig({ ...CONFIG, providers: [CONFIG.providers[0]!, { name: 'github', kind: 'github', secrets: [] }] });
    const unsigned = await run('repo');
    expect(unsigned.run).toMatchObject({ changed: 2 });
    expect(unsigned.cases[0]).toMatchObject({
      resigned: false,
      status: 401,
      diff: expect.arrayContaining([{ path: 'status', change: 'changed', before: 202, after: 401 }]),
      warning: expect.stringMatching(/^not re-signed: provider "github" has no usable secret/),
    });
  });

  it('saving refuses what it cannot do, and saves nothing', async () => {
    expect((await failure(api('saveSuite', { name: 'gone', event_ids: [999_999] }))).message).toMatch(/no event 999999.*nothing was saved/);
    expect((await failure(api('saveSuite', { name: 'none', filter: { provider: 'nobody' } }))).message).toMatch(/no stored event matches provider=nobody/);
    expect((await failure(api('saveSuite', { name: 'Bad Name', event_ids: [stripeIds[0]!] }))).code).toBe('invalid_argument');
    expect((await failure(api('saveSuite', { name: 'x', event_ids: [stripeIds[0]!], ignore: ['received_at'] }))).message).toMatch(/starts with \$/);
    expect((await failure(api('saveSuite', { name: 'x', event_ids: [stripeIds[0]!, stripeIds[0]!] }))).message).toMatch(/more than once/);
    expect((await failure(api('runSuite', { name: 'payments', chaos: { reorder_window: 1 } }))).code).toBe('invalid_argument');
    expect((await api('listSuites', {})).suites.map((suite) => suite.name)).toEqual(['payments', 'repo']);
  });
});

describe('bodies', () => {
  it('over 64 KiB: compared by SHA-256 beyond the stored part, said on the case', async () => {
    await api('saveSuite', { name: 'big', event_ids: [stripeIds.at(-1)!] });
    const first = await run('big', { target_url: handler.url('/big') });
    expect(first.cases[0]).toMatchObject({ verdict: 'new', reason: expect.stringMatching(/over 64 KiB/) });
    expect((await run('big')).cases[0]).toMatchObject({ verdict: 'pass', reason: expect.stringMatching(/compared by size and SHA-256/) });
    handler.behaviour.bigSuffix = 'changed';
    const changed = (await run('big')).cases[0]!;
    expect(changed).toMatchObject({ verdict: 'changed', diff: [{ path: 'body', change: 'changed' }], reason: expect.stringMatching(/the first 64 KiB are equal: they differ beyond/) });
  });

  it('not JSON: compared byte for byte, and noise there is said, not learned', async () => {
    await api('saveSuite', { name: 'text', event_ids: [stripeIds.at(-1)!] });
    const first = await run('text', { target_url: handler.url('/text') });
    expect(first.cases[0]!.warning).toMatch(/not JSON and differed between two sends/);
    expect((await run('text')).cases[0]).toMatchObject({ verdict: 'changed', reason: 'not JSON: compared byte for byte', diff: [{ path: 'body', change: 'changed' }] });
    handler.behaviour.stableText = true;
    await api('acceptSuiteRun', { id: (await run('text')).run.id });
    expect((await run('text')).cases[0]!.verdict).toBe('pass');
  });
});

describe('the suite file', () => {
  it('export → delete → import gives back the same suite: cases, ignores, expectations', async () => {
    const exported = await api('exportSuite', { name: 'payments' });
    expect(exported.filename).toBe('payments.suite.ndjson');
    const lines = exported.ndjson.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines[0]).toEqual({ switchboard_suite: 1, name: 'payments', providers: { stripe: 'stripe' }, ignore: expect.arrayContaining(['$.ts', '$.request_id']), compare_headers: [] });
    expect(lines[1]).toMatchObject({ case: 1, event: { id: stripeIds[0], provider: 'stripe', event_type: 'checkout.session.completed', payload_base64: expect.any(String) }, expect: { status: 200, body_encoding: 'json', body: { received: true, amount: 1000 } } });
    const before = await api('getSuite', { name: 'payments' });

    expect((await failure(api('importSuite', { ndjson: exported.ndjson }))).message).toMatch(/a suite named "payments" exists/);
    await api('deleteSuite', { name: 'payments' });
    const imported = await api('importSuite', { ndjson: exported.ndjson });
    expect(imported).toMatchObject({ created: true, suite: { name: 'payments', cases: 3, expectations: 3, ignore: before.suite.ignore } });
    expect((await api('getSuite', { name: 'payments' })).cases).toEqual(before.cases);
    expect((await api('exportSuite', { name: 'payments' })).ndjson).toBe(exported.ndjson);
    expect((await run('payments', { target_url: handler.url('/stripe') })).run).toMatchObject({ pass: 3 });
  });

  it('a malformed file is refused with its line, and nothing is written', async () => {
    const { ndjson } = await api('exportSuite', { name: 'payments' });
    const lines = ndjson.trimEnd().split('\n');
    const broken = [lines[0], lines[1], '{"case": 2, "event": {"provider": "stripe"}}', lines[3]].join('\n');
    const error = await failure(api('importSuite', { ndjson: broken.replace('"payments"', '"broken"') }));
    expect(error.message).toMatch(/^the suite file is not valid: line 3: event\.family/);
    expect((await failure(api('importSuite', { ndjson: 'not json\n' }))).message).toMatch(/line 1: not JSON/);
    expect((await api('listSuites', {})).suites.map((suite) => suite.name)).not.toContain('broken');
  });
});

describe('runs', () => {
  it('keeps the 20 latest of a suite', async () => {
    await api('saveSuite', { name: 'many', event_ids: [stripeIds.at(-1)!] });
    for (let i = 0; i < 22; i++) await run('many', { target_url: handler.url('/stripe') });
    const { runs } = await api('listSuiteRuns', { name: 'many' });
    expect(runs).toHaveLength(20);
    expect(runs[0]!.id).toBeGreaterThan(runs[19]!.id);
    const { suites } = await api('listSuites', {});
    expect(suites.find((suite) => suite.name === 'many')!.last_run).toMatchObject({ id: runs[0]!.id, pass: 1 });
  });

  it('one run of a suite at a time, and the suite cannot change under it', async () => {
    handler.behaviour.hangOn.add('charge.refunded');
    const { run: started } = await api('runSuite', { name: 'many', target_url: handler.url('/stripe') });
    expect((await failure(api('runSuite', { name: 'many' }))).message).toMatch(/suite "many" is running/);
    expect((await failure(api('deleteSuite', { name: 'many' }))).message).toMatch(/is running/);
    expect(t.sb.suites.cancel(started.id)).toBe(true);
    for (;;) {
      const { run: current } = await api('getSuiteRun', { id: started.id });
      if (current.status !== 'running') return expect(current.status).toBe('cancelled');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });
});

describe('retention', () => {
  it('never changes when the events it was made from are cleared', async () => {
    await t.sb.store.clearEvents();
    const { suite } = await api('getSuite', { name: 'payments' });
    expect(suite.cases).toBe(3);
    const { run: again } = await run('payments');
    expect(again).toMatchObject({ pass: 3 });
  });
});
