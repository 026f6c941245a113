import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnServe, type Serve } from '../helpers/cli.js';
import { githubDelivery, GITHUB_SECRET, startHandler, STRIPE_SECRET, stripeDelivery, type Handler } from '../core/suites/handler.js';
import { expectJunitShape } from '../core/suites/junit-shape.js';

/**
 * `switchboard suite …` as the real binary (DESIGN §14): the verbs against a spawned `serve`,
 * and `suite run --file` — the CI gate — with no instance and no data dir at all, re-signing
 * from a config file whose secrets come from the environment, judged by a handler that checks
 * every request with Stripe's and GitHub's own libraries.
 */

let dir: string;
let dataDir: string;
let serve: Serve;
let handler: Handler;

const cli = (...args: string[]) => runCli([...args, '--data-dir', dataDir]);
/** The standalone run: no --data-dir, and a SWITCHBOARD_HOME that does not exist (and must not be made). */
const ci = (args: string[], env: Record<string, string> = {}) => runCli(['suite', 'run', ...args], { SWITCHBOARD_HOME: join(dir, 'no-home'), ...env }, 60_000);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchboard-suite-cli-'));
  dataDir = join(dir, 'data');
  handler = await startHandler();
  const config = join(dir, 'config.json');
  await writeFile(
    config,
    JSON.stringify({
      providers: [
        { name: 'stripe', kind: 'stripe', secrets: [{ env: 'SUITE_STRIPE_SECRET' }] },
        { name: 'github', kind: 'github', secrets: [{ env: 'SUITE_GITHUB_SECRET' }] },
      ],
      replay: { timeout_ms: 2000 },
    }),
  );
  serve = await spawnServe(['--data-dir', dataDir, '--config', config, '--port', '0', '--control-port', '0', '--database-url', 'memory://', '--quiet'], {
    SUITE_STRIPE_SECRET: STRIPE_SECRET,
    SUITE_GITHUB_SECRET: GITHUB_SECRET,
  });
  for (const [type, amount] of [['checkout.session.completed', 1000], ['invoice.paid', 2500]] as const) {
    const { body, headers } = stripeDelivery(type, amount);
    expect((await fetch(`${serve.receiver}/webhooks/stripe`, { method: 'POST', headers, body })).status).toBe(200);
  }
  const push = await githubDelivery('push', { ref: 'refs/heads/main' });
  expect((await fetch(`${serve.receiver}/webhooks/github`, { method: 'POST', headers: push.headers, body: push.body })).status).toBe(200);
});

afterAll(async () => {
  serve?.child.kill('SIGTERM');
  await serve?.exited;
  await handler?.close();
  await rm(dir, { recursive: true, force: true });
});

afterEach(() => handler.reset());

describe('suite verbs against a running switchboard', () => {
  it('create, run (first run learns noise), run again (pass), list and show', async () => {
    const created = await cli('suite', 'create', 'payments', '--provider', 'stripe');
    expect(created.stderr).toBe('');
    expect(created).toMatchObject({ code: 0, stdout: expect.stringContaining('saved suite payments: 2 cases') });

    const first = await cli('suite', 'run', 'payments', '--to', handler.url('/stripe'));
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/#1 stripe checkout\.session\.completed\s+new/);
    expect(first.stdout).toMatch(/2 cases: 0 pass, 0 changed, 0 failed, 2 new/);
    expect(first.stdout).toMatch(/learned ignores \(noise between two sends\): .*\$\.ts/);
    expect(handler.received.every((request) => request.verified)).toBe(true);

    const second = await cli('suite', 'run', 'payments', '--json', '--junit', join(dir, 'payments.xml'));
    expect(second.code).toBe(0);
    const report = JSON.parse(second.stdout);
    expect(report).toMatchObject({ suite: 'payments', counts: { pass: 2, changed: 0, failed: 0, new: 0 }, target_url: handler.url('/stripe') });
    const { cases } = expectJunitShape(await readFile(join(dir, 'payments.xml'), 'utf8'));
    expect(cases).toHaveLength(2);

    const list = await cli('suite', 'list');
    expect(list.stdout).toMatch(/^SUITE\s+CASES\s+LAST RUN[\s\S]*payments\s+2\s+#\d+ .* done\s+2\s+0\s+0\s+0/m);
    const show = await cli('suite', 'show', 'payments');
    expect(show.stdout).toMatch(/suite payments: 2 cases, 2 with an expectation/);
    expect(show.stdout).toMatch(/ignore\s+.*\$\.request_id/);
  });

  it('exits 1 on a regression, printing the differences; the unknown suite exits 1 naming the existing ones', async () => {
    handler.behaviour.amountFactor = 3;
    const changed = await cli('suite', 'run', 'payments');
    expect(changed.code).toBe(1);
    expect(changed.stdout).toMatch(/#2 stripe invoice\.paid\s+changed\s+200 → 200/);
    expect(changed.stdout).toContain('$.amount changed: 2500 → 7500');
    expect(changed.stderr).toBe('switchboard: suite payments: 2 changed, 0 failed\n');

    const unknown = await cli('suite', 'run', 'paymnets', '--to', handler.url('/stripe'));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/there is no suite "paymnets"; the suites are: payments/);
  });

  it('export -o writes the suite file; import brings it back; delete removes it', async () => {
    const file = join(dir, 'payments.suite.ndjson');
    const exported = await cli('suite', 'export', 'payments', '-o', file);
    expect(exported.code).toBe(0);
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({ switchboard_suite: 1, name: 'payments', providers: { stripe: 'stripe' } });
    expect(lines[2]).toMatchObject({ case: 2, event: { provider: 'stripe', event_type: 'invoice.paid' }, expect: { status: 200, body_encoding: 'json' } });

    expect((await cli('suite', 'import', file)).code).toBe(1);
    expect((await cli('suite', 'import', file, '--replace')).stdout).toMatch(/replaced suite payments: 2 cases, 2 with an expectation/);
    expect((await cli('suite', 'delete', 'payments')).stdout).toBe('deleted suite payments\n');
    expect((await cli('suite', 'import', file)).stdout).toMatch(/imported suite payments/);
  });

  it('refuses usage mistakes with exit 2, a bad --chaos spec in one line', async () => {
    expect((await cli('suite', 'run')).code).toBe(2);
    expect((await cli('suite', 'create', 'payments', '--provider', 'stripe')).stderr).toMatch(/a suite named "payments" exists[\s\S]*--replace/);
    expect((await cli('suite', 'create', 'x', '--ids', '1,two')).code).toBe(2);
    for (const [spec, said] of [['duplicate=2', /--chaos: duplicate\.probability: /], ['dupe=1', /--chaos: unknown part "dupe"/], ['delay=9-1', /min must not exceed max/]] as const) {
      const bad = await cli('suite', 'run', 'payments', '--chaos', spec);
      expect(bad.code).toBe(2);
      // One line saying what is wrong (then the house's pointer to --help).
      expect(bad.stderr.split('\n')[0]).toMatch(said);
      expect(bad.stderr.trimEnd().split('\n')).toHaveLength(2);
    }
    expect(handler.received).toHaveLength(0);
  });

  it('--chaos: the run says its profile and seed, each case its idempotency and marks; not idempotent is exit 1, in --json too', async () => {
    const fine = await cli('suite', 'run', 'payments', '--to', handler.url('/stripe'), '--chaos', 'duplicate=1,copies=2,after=0,reorder=2,seed=4');
    expect(fine.code, fine.stderr).toBe(0);
    expect(fine.stdout).toContain('chaos duplicate=1,copies=2,after=0,reorder=2,seed=4  (repeat it with --chaos duplicate=1,copies=2,after=0,reorder=2,seed=4)');
    expect(fine.stdout).toMatch(/#1 stripe checkout\.session\.completed\s+pass .*idempotent, ×2 duplicates \(200, 200\)/);
    expect(handler.received).toHaveLength(6);
    expect(handler.received.every((request) => request.verified)).toBe(true);

    handler.reset();
    handler.behaviour.rejectRepeats = true;
    const bad = await cli('suite', 'run', 'payments', '--chaos', 'duplicate=1,after=0,delay=5,seed=4', '--json');
    expect(bad.code).toBe(1);
    const report = JSON.parse(bad.stdout);
    expect(report).toMatchObject({ chaos: 'duplicate=1,copies=1,after=0,delay=5,seed=4', counts: { changed: 2, pass: 0 } });
    expect(report.cases[0]).toMatchObject({ verdict: 'changed', idempotency: 'not_idempotent', chaos: { sent_order: 1, reordered: false, delay_ms: 5, duplicates: [409] }, reason: expect.stringMatching(/^not idempotent: the first send got 200, duplicate 1 got 409/) });

    // A handler that remembers those deliveries refuses even the first send now: that is a change, not a question of idempotency.
    const remembered = JSON.parse((await cli('suite', 'run', 'payments', '--chaos', 'duplicate=1,after=0,seed=4', '--json')).stdout);
    expect(remembered.cases[0]).toMatchObject({ verdict: 'changed', status: 409, idempotency: null, chaos: { duplicates: [409] } });

    handler.reset();
    handler.behaviour.rejectRepeats = true;
    const text = await cli('suite', 'run', 'payments', '--chaos', 'duplicate=1,after=0,seed=4');
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/changed .*not idempotent, ×1 duplicate \(409\)/);
    expect(text.stdout).toContain('note: not idempotent: the first send got 200, duplicate 1 got 409 — a provider would keep retrying or disable the endpoint');
  });
});

describe('suite run --file: CI, with no instance', () => {
  let file: string;
  let ciConfig: string;

  beforeAll(async () => {
    file = join(dir, 'ci.suite.ndjson');
    // The suite file as a developer commits it: exported, expectations and all, from their instance.
    await cli('suite', 'create', 'ci', '--provider', 'stripe');
    const exported = await cli('suite', 'export', 'ci', '-o', file);
    expect(exported.code).toBe(0);
    ciConfig = join(dir, 'ci.json');
    await writeFile(ciConfig, JSON.stringify({ providers: [{ name: 'stripe', kind: 'stripe', secrets: [{ env: 'CI_STRIPE_SECRET' }] }] }));
  });

  it('--accept writes the expectations and learned ignores into the file; the next run passes; exit 0', async () => {
    const first = await ci(['--file', file, '--to', handler.url('/stripe'), '--config', ciConfig, '--accept'], { CI_STRIPE_SECRET: STRIPE_SECRET });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/wrote the expectations and 2 learned ignores into/);
    expect(handler.received).toHaveLength(4);
    expect(handler.received.every((request) => request.verified)).toBe(true);
    const header = JSON.parse((await readFile(file, 'utf8')).split('\n')[0]!);
    expect(header.ignore.sort()).toEqual(['$.request_id', '$.ts']);

    handler.received = [];
    const junit = join(dir, 'ci.xml');
    const second = await ci(['--file', file, '--to', handler.url('/stripe'), '--config', ciConfig, '--junit', junit, '--json'], { CI_STRIPE_SECRET: STRIPE_SECRET });
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ suite: 'ci', counts: { pass: 2, changed: 0, failed: 0, new: 0 } });
    expect(handler.received).toHaveLength(2);
    const { suites } = expectJunitShape(await readFile(junit, 'utf8'));
    expect(suites[0]).toMatchObject({ '@name': 'ci', '@tests': '2', '@failures': '0', '@errors': '0' });
    expect(existsSync(join(dir, 'no-home'))).toBe(false);
  });

  it('exit 1 with a JUnit failure on a regression', async () => {
    handler.behaviour.amountFactor = 2;
    const junit = join(dir, 'ci-changed.xml');
    const run = await ci(['--file', file, '--to', handler.url('/stripe'), '--config', ciConfig, '--junit', junit], { CI_STRIPE_SECRET: STRIPE_SECRET });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('$.amount changed: 1000 → 2000');
    const { cases } = expectJunitShape(await readFile(junit, 'utf8'));
    expect((cases[0]!.failure as Record<string, unknown>[])[0]!['#text']).toBe('$.amount changed: 1000 → 2000');
  });

  it('--chaos with --file: a duplicate the handler refuses is a JUnit failure and exit 1; one it takes passes', async () => {
    const junit = join(dir, 'ci-chaos.xml');
    const env = { CI_STRIPE_SECRET: STRIPE_SECRET };
    const fine = await ci(['--file', file, '--to', handler.url('/stripe'), '--config', ciConfig, '--chaos', 'duplicate=1,after=0'], env);
    expect(fine.code, fine.stderr).toBe(0);
    expect(fine.stdout).toMatch(/^chaos duplicate=1,copies=1,after=0,seed=\d+ /m);
    expect(fine.stdout).toMatch(/pass .*idempotent, ×1 duplicate \(200\)/);
    expect(handler.received.every((request) => request.verified)).toBe(true);

    handler.reset();
    handler.behaviour.rejectRepeats = true;
    const bad = await ci(['--file', file, '--to', handler.url('/stripe'), '--config', ciConfig, '--chaos', 'duplicate=1,seed=7', '--junit', junit], env);
    expect(bad.code).toBe(1);
    const { suites, cases } = expectJunitShape(await readFile(junit, 'utf8'));
    expect(suites[0]).toMatchObject({ '@failures': '2', '@errors': '0' });
    expect((cases[0]!.failure as Record<string, unknown>[])[0]).toMatchObject({ '@type': 'not_idempotent', '@message': expect.stringMatching(/^not idempotent: the first send got 200, duplicate 1 got 409/) });
    expect((await ci(['--file', file, '--to', handler.url('/stripe'), '--chaos', 'reorder=1'])).code).toBe(2);
  });

  it('a provider missing from the config, or its secret unset: sent unsigned with a warning, and the handler refuses it', async () => {
    const other = join(dir, 'other.json');
    await writeFile(other, JSON.stringify({ providers: [{ name: 'github', kind: 'github', secrets: [{ env: 'X' }] }] }));
    const missing = await ci(['--file', file, '--to', handler.url('/stripe'), '--config', other]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toMatch(/warning: not re-signed: provider "stripe" \(stripe\) is not in .*other\.json; sent without a signature/);
    expect(missing.stdout).toContain('status changed: 200 → 400');
    expect(handler.received.some((request) => request.verified)).toBe(false);

    const unset = await ci(['--file', file, '--to', handler.url('/stripe'), '--config', ciConfig]);
    expect(unset.stdout).toMatch(/warning: not re-signed: provider "stripe" has no usable secret in .*ci\.json \(set CI_STRIPE_SECRET/);
  });

  it('a malformed file exits 2 naming its line; a bad target exits 2; a refused one fails every case (exit 1)', async () => {
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
    const broken = join(dir, 'broken.ndjson');
    await writeFile(broken, [lines[0], lines[1], '{"case": 2, "event": {"provider": "stripe"}, "expect": null}'].join('\n'));
    const bad = await ci(['--file', broken, '--to', handler.url('/stripe')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^switchboard: .*broken\.ndjson: line 3: event\.family/);
    await writeFile(broken, '{"switchboard_suite": 2}\n');
    expect((await ci(['--file', broken, '--to', handler.url('/stripe')])).stderr).toMatch(/line 1: switchboard_suite/);
    expect((await ci(['--file', join(dir, 'nothing.ndjson'), '--to', handler.url('/stripe')])).code).toBe(2);
    expect((await ci(['--file', file, '--to', 'not a url'])).code).toBe(2);
    expect((await ci(['--file', file])).stderr).toMatch(/--file needs --to URL/);

    const refused = await ci(['--file', file, '--to', 'http://metadata.google.internal/hooks', '--config', ciConfig], { CI_STRIPE_SECRET: STRIPE_SECRET });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/failed\s+refused by the target guard, nothing sent/);
    expect(handler.received).toHaveLength(0);
  });
});
