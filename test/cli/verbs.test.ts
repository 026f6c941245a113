import { sign, verify } from '@octokit/webhooks-methods';
import Stripe from 'stripe';
import { createServer } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventSummarySchema } from '../../src/shared/events.js';
import { EventListItemSchema, GetEventOutputSchema, ImportEventsOutputSchema, ListProvidersOutputSchema, ListTestEventsOutputSchema, ReplayEventOutputSchema } from '../../src/shared/api.js';
import { ExportedEventSchema } from '../../src/shared/export.js';
import { BIN, runCli, spawnServe, waitForOutput, type Serve } from '../helpers/cli.js';
import { startTestSwitchboard, TEST_TOKEN } from '../helpers/core.js';
import { startConsumer, type Consumer } from '../core/replay/consumer.js';
import { spawn } from 'node:child_process';

/**
 * The client verbs (DESIGN §13), each run as the real binary against a real spawned
 * `switchboard serve`: they find it through its data dir (recorded control URL, token file).
 */

const SECRET = 'verbs-test-secret';
const STRIPE_SECRET = 'whsec_verbs_test_0123456789abcdef';
const stripe = new Stripe('sk_test_verbs');
const VERBS = ['serve', 'events', 'show', 'replay', 'trigger', 'export', 'import', 'providers'];
let dir: string;
let dataDir: string;
let serve: Serve;
let consumer: Consumer;
const ids: Record<string, number> = {};

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const cli = (...args: string[]) => runCli([...args, '--data-dir', dataDir]);

async function deliver(provider: string, body: string, headers: Record<string, string> = {}): Promise<number> {
  const answer = await fetch(`${serve.receiver}/webhooks/${provider}`, { method: 'POST', headers, body });
  expect(answer.status).toBe(200);
  return ((await answer.json()) as { id: number }).id;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchboard-verbs-'));
  dataDir = join(dir, 'data');
  consumer = await startConsumer();
  const config = join(dir, 'config.json');
  await writeFile(
    config,
    JSON.stringify({
      providers: [
        { name: 'homelab', kind: 'open' },
        { name: 'github', kind: 'github', secrets: [{ env: 'VERBS_GITHUB_SECRET' }] },
        { name: 'stripe', kind: 'stripe', secrets: [{ env: 'VERBS_STRIPE_SECRET' }], forward_to: [consumer.url('/stripe')] },
      ],
      replay: { default_target: consumer.url('/default') },
    }),
  );
  serve = await spawnServe(['--data-dir', dataDir, '--config', config, '--port', '0', '--control-port', '0', '--database-url', 'memory://', '--quiet'], {
    VERBS_GITHUB_SECRET: SECRET,
    VERBS_STRIPE_SECRET: STRIPE_SECRET,
  });
  const push = JSON.stringify({ ref: 'refs/heads/main', note: 'needle-in-payload' });
  ids.push = await deliver('github', push, {
    'content-type': 'application/json',
    'x-github-event': 'push',
    'x-github-delivery': 'verbs-1',
    'x-hub-signature-256': await sign(SECRET, push),
  });
  ids.ping = await deliver('homelab', JSON.stringify({ type: 'ping' }), { 'content-type': 'application/json' });
});

afterAll(async () => {
  serve.child.kill('SIGTERM');
  await serve.exited;
  await consumer.close();
  await rm(dir, { recursive: true, force: true });
});

describe('every verb', () => {
  it.each(VERBS)('%s --help prints its usage and exits 0', async (verb) => {
    const run = await runCli([verb, '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Usage: switchboard ${verb}`);
  });

  it('refuses an unknown verb and a bad flag with exit 2 and one line', async () => {
    const unknown = await runCli(['evnts']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^switchboard: unknown command "evnts"/);
    const badLimit = await cli('events', '--limit', 'lots');
    expect(badLimit.code).toBe(2);
    expect(badLimit.stderr).toMatch(/--limit must be a whole number/);
  });
});

describe('without a running instance, or with the wrong token', () => {
  it('says in one line that nothing answers and how to start one (exit 2)', async () => {
    const port = await closedPort();
    for (const verb of [['events'], ['show', '1'], ['replay', '1'], ['trigger', 'github'], ['export'], ['providers']]) {
      const run = await runCli([...verb, '--control-url', `http://127.0.0.1:${port}`]);
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(`no switchboard is answering on 127.0.0.1:${port} — start one with: switchboard serve\n`);
      expect(run.stdout).toBe('');
    }
  });

  it('finds the control port in the config.json of a data dir that no instance recorded', async () => {
    const port = await closedPort();
    const empty = join(dir, 'stopped');
    await runCli(['events', '--data-dir', empty]); // no dir at all: the default port
    await import('node:fs/promises').then(({ mkdir }) => mkdir(empty, { recursive: true }));
    await writeFile(join(empty, 'config.json'), JSON.stringify({ control: { port } }));
    const run = await runCli(['events', '--data-dir', empty]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`no switchboard is answering on 127.0.0.1:${port} — start one with: switchboard serve --data-dir ${empty}\n`);
  });

  it('says the token was refused, in one line (exit 2)', async () => {
    const run = await cli('providers', '--token', 'not-the-token');
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/refused the control token/);
    expect(run.stderr).not.toContain('not-the-token');
  });

  it('takes the token from SWITCHBOARD_TOKEN and the URL from --control-url', async () => {
    const token = (await readFile(join(dataDir, 'control-token'), 'utf8')).trim();
    const run = await runCli(['providers', '--json', '--control-url', serve.control, '--data-dir', join(dir, 'elsewhere')], { SWITCHBOARD_TOKEN: token });
    expect(run.code).toBe(0);
    expect(ListProvidersOutputSchema.parse(JSON.parse(run.stdout)).providers.map((provider) => provider.status.name)).toEqual(['homelab', 'github', 'stripe']);
  });
});

describe('events', () => {
  it('prints an aligned table, oldest first, times local', async () => {
    const run = await cli('events');
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+TIME\s+PROVIDER\s+TYPE\s+TRUST\s+SIZE$/);
    expect(lines[1]).toMatch(new RegExp(`^#${ids.push}\\s+\\d\\d:\\d\\d:\\d\\d\\s+github\\s+push\\s+signed\\s+\\d+ B$`));
    expect(lines[2]).toMatch(new RegExp(`^#${ids.ping}\\s+\\d\\d:\\d\\d:\\d\\d\\s+homelab\\s+ping\\s+open\\s+\\d+ B$`));
    // Aligned: every row's PROVIDER column starts where the header's does.
    const column = lines[0]!.indexOf('PROVIDER');
    for (const line of lines.slice(1)) expect(line.slice(column)).toMatch(/^(github|homelab)/);
  });

  it('--json: one EventSummary per line; filters by provider, type and search', async () => {
    const all = await cli('events', '--json');
    const events = all.stdout.trim().split('\n').map((line) => EventListItemSchema.strict().parse(JSON.parse(line)));
    expect(events.map((event) => event.id)).toEqual([ids.push, ids.ping]);
    const github = await cli('events', '--json', '--provider', 'github');
    expect(github.stdout.trim().split('\n').map((line) => JSON.parse(line).id)).toEqual([ids.push]);
    const typed = await cli('events', '--json', '--type', 'ping');
    expect(typed.stdout.trim().split('\n').map((line) => JSON.parse(line).id)).toEqual([ids.ping]);
    const prefixed = await cli('events', '--json', '--type-prefix', 'pi');
    expect(prefixed.stdout.trim().split('\n').map((line) => JSON.parse(line).id)).toEqual([ids.ping]);
    const searched = await cli('events', '--json', '--search', 'needle-in');
    expect(searched.stdout.trim().split('\n').map((line) => JSON.parse(line).id)).toEqual([ids.push]);
    const limited = await cli('events', '--json', '--limit', '1');
    expect(limited.stdout.trim().split('\n').map((line) => JSON.parse(line).id)).toEqual([ids.ping]);
  });

  it('an unknown provider filter is the server\'s error, exit 1', async () => {
    const run = await cli('events', '--provider', 'nope');
    if (run.code === 0) expect(run.stdout.trim()).toBe(''); // older servers answer an empty page
    else {
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^switchboard: /);
    }
  });

  it('--follow prints a delivery made after it started, then exits 0 on Ctrl-C', async () => {
    const child = spawn(process.execPath, [BIN, 'events', '--follow', '--json', '--provider', 'homelab', '--data-dir', dataDir], {
      env: { ...process.env, SWITCHBOARD_TOKEN: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (err += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await waitForOutput(() => err, /following new events on 127\.0\.0\.1:\d+/);
      expect(out.trim().split('\n').map((line) => JSON.parse(line).id)).toEqual([ids.ping]);
      await deliver('github', '{"zen":"not for this filter"}', {
        'x-github-event': 'ping',
        'x-github-delivery': 'verbs-2',
        'x-hub-signature-256': await sign(SECRET, '{"zen":"not for this filter"}'),
      });
      const later = await deliver('homelab', JSON.stringify({ type: 'after-follow' }));
      await waitForOutput(() => out, new RegExp(`"id":${later},`));
      const followed = out.trim().split('\n').map((line) => EventSummarySchema.parse(JSON.parse(line)));
      expect(followed.map((event) => event.id)).toEqual([ids.ping, later]);
      expect(followed[1]).toMatchObject({ provider: 'homelab', event_type: 'after-follow' });
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  });
});

describe('show', () => {
  it('prints trust, headers (redacted signature) and the pretty payload', async () => {
    const run = await cli('show', String(ids.push));
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^#${ids.push}  github  push  signed \\(verified\\)`));
    expect(run.stdout).toMatch(/x-hub-signature-256\s+«redacted»/);
    expect(run.stdout).toContain('"note": "needle-in-payload"');
    expect(run.stdout).not.toContain(SECRET);
  });

  it('--json is the getEvent output', async () => {
    const run = await cli('show', `#${ids.ping}`, '--json');
    const detail = GetEventOutputSchema.parse(JSON.parse(run.stdout));
    expect(detail.event).toMatchObject({ id: ids.ping, provider: 'homelab', payload: '{"type":"ping"}' });
  });

  it('an id that does not exist: exit 1 and why', async () => {
    const run = await cli('show', '99999');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/there is no event 99999/);
  });
});

describe('replay', () => {
  it('re-signs to the default target, recorded as asked by the cli', async () => {
    consumer.reset();
    const run = await cli('replay', String(ids.push));
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^→ ${consumer.url('/default').replace(/\./g, '\\.')}  200  \\d+ ms  \\(re-signed\\)`));
    const request = consumer.requests.at(-1)!;
    expect(request.headers['x-hub-signature-256']).toBe(await sign(SECRET, request.body.toString()));
    const history = GetEventOutputSchema.parse(JSON.parse((await cli('show', String(ids.push), '--json')).stdout)).replays;
    expect(history[0]).toMatchObject({ requested_by: 'cli', resigned: true, delivered: true, response_status: 200 });
  });

  it('--to and --no-resign; --json is the replay row', async () => {
    consumer.reset();
    const run = await cli('replay', String(ids.push), '--to', consumer.url('/other'), '--no-resign', '--json');
    expect(run.code).toBe(0);
    const replay = ReplayEventOutputSchema.parse(JSON.parse(run.stdout));
    expect(replay).toMatchObject({ target_url: consumer.url('/other'), resigned: false, requested_by: 'cli', response_status: 200 });
    expect(consumer.requests.at(-1)!.headers['x-hub-signature-256']).toBeUndefined();
  });

  it('a consumer that is not running: exit 1, the failure recorded', async () => {
    const port = await closedPort();
    const run = await cli('replay', String(ids.ping), '--to', `http://127.0.0.1:${port}/hooks`);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`replay of #${ids.ping} to http://127\\.0\\.0\\.1:${port}/hooks failed: .*refused`));
  });

  it('a target outside replay.allow_hosts is refused: exit 1 and the fix', async () => {
    const run = await cli('replay', String(ids.ping), '--to', 'http://example.com/hooks');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/replay target refused/);
    expect(run.stderr).toMatch(/fix: .*allow_hosts/);
  });
});

/** Waits until the running instance has reloaded config.json with this replay.default_target. */
async function defaultTargetIs(target: string | null): Promise<void> {
  const token = (await readFile(join(dataDir, 'control-token'), 'utf8')).trim();
  for (let tries = 0; ; tries++) {
    const response = await fetch(`${serve.control}/api/getSettings`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
    if (((await response.json()) as { replay: { default_target: string | null } }).replay.default_target === target) return;
    if (tries > 200) throw new Error(`config.json was not reloaded (default_target ${target})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('replay: where it goes, edits, and scripts', () => {
  it("without --to, sends a Stripe event to Stripe's forward target, not replay.default_target; Stripe's SDK accepts it", async () => {
    const body = JSON.stringify({ id: 'evt_cli_target', object: 'event', type: 'invoice.paid', data: { object: { amount_paid: 100 } } });
    const forwarded = consumer.nextRequest();
    const id = await deliver('stripe', body, { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: body, secret: STRIPE_SECRET }) });
    await forwarded;
    consumer.reset();
    const run = await cli('replay', String(id));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^→ ${consumer.url('/stripe').replace(/\./g, '\\.')}  200`));
    const sent = consumer.requests.at(-1)!;
    expect(sent.url).toBe('/stripe');
    expect(stripe.webhooks.constructEvent(sent.body, sent.headers['stripe-signature'] as string, STRIPE_SECRET).id).toBe('evt_cli_target');
  });

  it('--set and --header edit what is sent, re-signed over the edit (GitHub’s own check passes); the row says so', async () => {
    consumer.reset();
    const run = await cli('replay', String(ids.push), '--to', consumer.url('/edited'), '--set', 'ref=refs/heads/fix', '--set', 'commits=[{"id":"abc"}]', '--set', 'forced=true', '--header', 'x-debug: from the cli', '--json');
    expect(run.code, run.stderr).toBe(0);
    const replay = ReplayEventOutputSchema.parse(JSON.parse(run.stdout));
    expect(replay).toMatchObject({ resigned: true, payload_edited: true, headers_overridden: ['x-debug'], requested_by: 'cli' });
    const sent = consumer.requests.at(-1)!;
    expect(JSON.parse(sent.body.toString())).toEqual({ ref: 'refs/heads/fix', note: 'needle-in-payload', commits: [{ id: 'abc' }], forced: true });
    expect(sent.headers['x-debug']).toBe('from the cli');
    expect(await verify(SECRET, sent.body.toString(), sent.headers['x-hub-signature-256'] as string)).toBe(true);
  });

  it('--payload FILE sends the file’s exact bytes (with --set applied on top), re-signed', async () => {
    const file = join(dir, 'edited.json');
    await writeFile(file, '{"ref":"refs/heads/from-file","emoji":"🚀"}\n');
    consumer.reset();
    const run = await cli('replay', String(ids.push), '--to', consumer.url('/file'), '--payload', file);
    expect(run.code, run.stderr).toBe(0);
    const sent = consumer.requests.at(-1)!;
    expect(sent.body.toString()).toBe('{"ref":"refs/heads/from-file","emoji":"🚀"}\n');
    expect(await verify(SECRET, sent.body.toString(), sent.headers['x-hub-signature-256'] as string)).toBe(true);
    await cli('replay', String(ids.push), '--to', consumer.url('/file'), '--payload', file, '--set', 'ref=refs/heads/both');
    expect(JSON.parse(consumer.requests.at(-1)!.body.toString())).toEqual({ ref: 'refs/heads/both', emoji: '🚀' });
  });

  it('--fail-on-non-2xx: a 500 answer is exit 1 (and still printed); without the flag it is exit 0', async () => {
    consumer.respond = (_request, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('handler broke');
    };
    try {
      const plain = await cli('replay', String(ids.ping), '--to', consumer.url('/broken'));
      expect(plain.code).toBe(0);
      const strict = await cli('replay', String(ids.ping), '--to', consumer.url('/broken'), '--fail-on-non-2xx');
      expect(strict.code).toBe(1);
      expect(strict.stdout).toMatch(/  500  .*\n.*handler broke/);
      expect(strict.stderr).toMatch(new RegExp(`^switchboard: replay of #${ids.ping} to .*/broken was answered 500 \\(--fail-on-non-2xx\\)`));
    } finally {
      consumer.reset();
    }
    expect((await cli('replay', String(ids.ping), '--to', consumer.url('/fine'), '--fail-on-non-2xx')).code).toBe(0);
  });

  it('--chaos sends re-signed duplicates and prints each copy and the idempotency verdict; a copy that fails is exit 1 with --fail-on-non-2xx', async () => {
    let calls = 0;
    consumer.reset(); // what earlier tests sent is not this test's
    consumer.respond = (_request, res) => {
      res.writeHead(calls++ === 0 ? 200 : 409).end();
    };
    try {
      const run = await cli('replay', String(ids.push), '--to', consumer.url('/chaos'), '--chaos', 'duplicate=1,copies=1,after=0,seed=4', '--fail-on-non-2xx');
      expect(run.stdout).toMatch(/  200  .*\n.*  409  .*\(duplicate\)\nnot idempotent/);
      expect(run.code).toBe(1);
      expect(consumer.requests).toHaveLength(2);
      for (const sent of consumer.requests) expect(await verify(SECRET, sent.body.toString(), sent.headers['x-hub-signature-256'] as string)).toBe(true);
      const bad = await cli('replay', String(ids.push), '--chaos', 'duplicate=2');
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/--chaos: duplicate.probability/);
    } finally {
      consumer.reset();
    }
  });

  it('refuses a malformed --header or --set, an unreadable --payload, and --set on a body that is not JSON, in one line each', async () => {
    const header = await cli('replay', String(ids.ping), '--header', 'no colon here');
    expect(header.code).toBe(2);
    expect(header.stderr).toMatch(/is not 'name: value'/);
    const set = await cli('replay', String(ids.ping), '--set', 'novalue');
    expect(set.code).toBe(2);
    expect(set.stderr).toMatch(/is not path=value/);
    const missing = await cli('replay', String(ids.ping), '--payload', join(dir, 'nope.json'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^switchboard: --payload .*nope\.json: cannot read it \(no such file\)\n$/);
    const text = await deliver('homelab', 'not json at all', { 'content-type': 'text/plain' });
    const notJson = await cli('replay', String(text), '--to', consumer.url('/x'), '--set', 'a=1');
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toMatch(/is not JSON, so fields cannot be set in it/);
    expect(notJson.stderr).toMatch(/fix: send a whole edited payload instead/);
  });

  it('with no target anywhere, names --to in its one-line answer', async () => {
    consumer.reset();
    const id = await deliver('homelab', JSON.stringify({ type: 'untargeted' }), { 'content-type': 'application/json' });
    const config = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
    await writeFile(join(dir, 'config.json'), JSON.stringify({ ...config, replay: {} }));
    try {
      await defaultTargetIs(null);
      const run = await cli('replay', String(id));
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/no replay target for event \d+: give one \(target_url; --to on the command line\)/);
      expect(consumer.requests).toEqual([]);
    } finally {
      await writeFile(join(dir, 'config.json'), JSON.stringify(config));
      await defaultTargetIs(config.replay.default_target);
    }
  });
});

describe('providers', () => {
  it('prints a table with status and receive URLs', async () => {
    const run = await cli('providers');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^NAME\s+KIND\s+TRUST\s+STATUS\s+SECRET\s+RECEIVES AT$/m);
    expect(run.stdout).toMatch(new RegExp(`^github\\s+github\\s+signed\\s+listening\\s+configured\\s+${serve.receiver.replace(/\./g, '\\.')}/webhooks/github$`, 'm'));
    expect(run.stdout).toMatch(/^homelab\s+open\s+open\s+listening\s+-\s+http:/m);
  });

  it('--json is the listProviders output', async () => {
    const run = await cli('providers', '--json');
    const result = ListProvidersOutputSchema.parse(JSON.parse(run.stdout));
    expect(result.providers.find((provider) => provider.status.name === 'github')).toMatchObject({
      status: { kind: 'github', secret_status: 'configured' },
      receive_url: `${serve.receiver}/webhooks/github`,
    });
  });
});

describe('trigger', () => {
  it('--list names what each provider can send', async () => {
    const run = await cli('trigger', '--list', 'github');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^PROVIDER\s+KIND\s+EVENT TYPE\s+DESCRIPTION$/m);
    expect(run.stdout).toMatch(/^github\s+github\s+push\s+\S/m);
    const json = ListTestEventsOutputSchema.parse(JSON.parse((await cli('trigger', '--list', '--json')).stdout));
    expect(json.test_events.some((info) => info.provider === 'homelab')).toBe(true);
  });

  it('sends a signed test event with overrides, stored as TEST', async () => {
    const run = await cli('trigger', 'github', 'push', '--set', 'ref=refs/heads/from-cli', '--set', 'forced=true');
    expect(run.code).toBe(0);
    const match = /^sent #(\d+)  github  push  signed  TEST$/m.exec(run.stdout);
    expect(match, run.stdout + run.stderr).not.toBeNull();
    const detail = GetEventOutputSchema.parse(JSON.parse((await cli('show', match![1]!, '--json')).stdout));
    expect(detail.event).toMatchObject({ origin: 'test', verified: true, trust_mode: 'signed' });
    expect(JSON.parse(detail.event.payload)).toMatchObject({ ref: 'refs/heads/from-cli', forced: true });
    const listed = await cli('events', '--origin', 'test');
    expect(listed.stdout).toMatch(new RegExp(`^#${match![1]}\\s.*github\\s+push\\s+signed TEST`, 'm'));
  });

  it('--payload FILE sends that body; --json is the event summary', async () => {
    const file = join(dir, 'payload.json');
    await writeFile(file, '{"hand":"written"}');
    const run = await cli('trigger', 'homelab', '--payload', file, '--json');
    expect(run.code).toBe(0);
    const event = EventSummarySchema.parse(JSON.parse(run.stdout));
    expect(event).toMatchObject({ provider: 'homelab', origin: 'test' });
    expect(GetEventOutputSchema.parse(JSON.parse((await cli('show', String(event.id), '--json')).stdout)).event.payload).toBe('{"hand":"written"}');
  });

  it('no provider is a usage error (2); an unknown one is the server saying which exist (1)', async () => {
    const none = await cli('trigger');
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/which provider\?/);
    const unknown = await cli('trigger', 'nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/github/);
  });
});

describe('export and import', () => {
  it('exports NDJSON to stdout, every line a full event, oldest first; filters apply', async () => {
    const run = await cli('export', '--provider', 'github');
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n').map((line) => ExportedEventSchema.parse(JSON.parse(line)));
    expect(lines[0]).toMatchObject({ id: ids.push, provider: 'github', external_id: 'verbs-1' });
    expect(lines.every((line) => line.provider === 'github')).toBe(true);
    expect(lines.map((line) => line.id)).toEqual([...lines.map((line) => line.id)].sort((a, b) => a - b));
    // The flag the desktop's "Export (copy command)" writes for the UI's type box.
    const byPrefix = await cli('export', '--type-prefix', 'pi');
    expect(byPrefix.code).toBe(0);
    const types = byPrefix.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { event_type: string }).event_type);
    expect(types).toContain('ping');
    expect(types.every((type) => type.startsWith('pi'))).toBe(true);
  });

  it('-o FILE writes the file and says how many; HAR is one JSON document', async () => {
    const file = join(dir, 'all.ndjson');
    const run = await cli('export', '-o', file);
    expect(run.code).toBe(0);
    const count = (await readFile(file, 'utf8')).trim().split('\n').length;
    expect(run.stderr).toBe(`exported ${count} events to ${file}\n`);
    const har = await cli('export', '--format', 'har', '--provider', 'homelab');
    expect(JSON.parse(har.stdout).log.entries.length).toBeGreaterThan(0);
  });

  it('a bad filter is a usage error (2) or the server refusing it (1)', async () => {
    expect((await cli('export', '--format', 'csv')).code).toBe(2);
    // Refused before anything is sent, with an example (#26.10), not the API's bare "Invalid input".
    const badSince = await cli('export', '--since', 'yesterday');
    expect(badSince.code).toBe(2);
    expect(badSince.stderr).toMatch(/--since takes an ISO-8601 date or time, e\.g\. --since \d{4}-\d\d-\d\d/);
  });

  it('import: lines already stored are duplicates; a bad line is named and exits 1, the rest imported', async () => {
    const file = join(dir, 'all.ndjson');
    const again = await cli('import', file, '--json');
    expect(again.code).toBe(0);
    const result = ImportEventsOutputSchema.parse(JSON.parse(again.stdout));
    expect(result).toMatchObject({ imported: 0, error_count: 0 });
    expect(result.duplicates).toBe((await readFile(file, 'utf8')).trim().split('\n').length);

    const mixed = join(dir, 'mixed.ndjson');
    const fresh = { provider: 'homelab', family: 'webhook', event_type: 'imported.one', external_id: 'imp-1', trust_mode: 'open', verified: false, received_at: '2026-01-02T03:04:05.000006Z', headers: {}, payload_base64: Buffer.from('{"imported":true}').toString('base64') };
    await writeFile(mixed, `${JSON.stringify(fresh)}\n{"not":"an event"}\n`);
    const run = await cli('import', mixed);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('imported 1 event, 0 already stored\n');
    expect(run.stderr).toMatch(/^  line 2: /m);
    expect(run.stderr).toMatch(/1 line of .*mixed\.ndjson not imported/);
    const listed = await cli('events', '--json', '--type', 'imported.one');
    expect(JSON.parse(listed.stdout.trim())).toMatchObject({ origin: 'import', received_at: '2026-01-02T03:04:05.000006Z' });
  });

  it('import of a file that does not exist is a usage error', async () => {
    const run = await cli('import', join(dir, 'missing.ndjson'));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^switchboard: cannot import \S*missing\.ndjson: no such file\n$/);
  });
});

describe('events --search that runs out of time', () => {
  it('goes on from where each short answer stopped until the page is full or every event was searched', async () => {
    // Every answer is one 3-row slice, as a phrase the index cannot narrow down gets at a million events.
    const t = await startTestSwitchboard({ providers: [{ name: 'homelab', kind: 'open' }] }, { searchTuning: { windowRows: 3, budgetMs: 0, indexMaxCandidates: 0 } });
    try {
      const needles: number[] = [];
      for (let n = 0; n < 12; n++) {
        const answer = await t.deliver('/webhooks/homelab', JSON.stringify({ type: 'tick', n, ...(n < 2 ? { note: 'NEEDLE-77' } : {}) }), { 'content-type': 'application/json' });
        if (n < 2) needles.push(answer.json.id as number);
      }
      const events = (...args: string[]) =>
        runCli(['events', '--json', '--control-url', t.sb.url.control, '--data-dir', join(dir, 'elsewhere'), ...args], { SWITCHBOARD_TOKEN: TEST_TOKEN });
      const ids = (run: { stdout: string }) => run.stdout.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line).id as number);
      expect(ids(await events('--search', 'needle-77'))).toEqual(needles);
      expect(ids(await events('--search', 'needle-77', '--limit', '1'))).toEqual([needles[1]]);
      const none = await events('--search', 'no-such-thing');
      expect(none.code).toBe(0);
      expect(ids(none)).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
