import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runCli, spawnServe, waitForOutput, type Serve } from '../helpers/cli.js';
import { startConsumer, type Consumer } from '../core/replay/consumer.js';

/**
 * The CLI against what a sender, another program or a stopped instance does to it (#22.6,
 * #22.14, #26.10), run as the real binary against a real `switchboard serve`.
 */

/** Any C0/C1 control character or DEL except the newline: what must never reach a terminal raw. */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

let dir: string;
let dataDir: string;
let serve: Serve;
let consumer: Consumer;
const cli = (...args: string[]) => runCli([...args, '--data-dir', dataDir]);
const post = (provider: string, body: string, headers: Record<string, string> = {}) => fetch(`${serve.receiver}/webhooks/${provider}`, { method: 'POST', body, headers });

/** A delivery with header bytes fetch would not send (0x9B, the one-byte CSI), over a raw socket. */
function rawDelivery(path: string, headerLine: Buffer, body: Buffer): Promise<string> {
  const { hostname, port } = new URL(serve.receiver);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(Buffer.concat([Buffer.from(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nConnection: close\r\n`), headerLine, Buffer.from('\r\n\r\n'), body]));
    });
    let answer = '';
    socket.setEncoding('latin1').on('data', (chunk) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchboard-cli-hardening-'));
  dataDir = join(dir, 'data');
  consumer = await startConsumer();
  const config = join(dir, 'config.json');
  await writeFile(config, JSON.stringify({ providers: [{ name: 'homelab', kind: 'open' }, { name: 'shop', kind: 'open', forward_to: [consumer.url('/shop')] }, { name: 'gh', kind: 'github', secrets: [{ env: 'HARDENING_UNSET_SECRET' }] }] }));
  serve = await spawnServe(['--data-dir', dataDir, '--config', config, '--port', '0', '--control-port', '0', '--database-url', 'memory://']);
});
afterAll(async () => {
  if (serve.child.exitCode === null) {
    serve.child.kill('SIGTERM');
    await serve.exited;
  }
  await consumer.close();
  await rm(dir, { recursive: true, force: true });
});

describe('terminal escapes from a sender are shown escaped (#22.6)', () => {
  const EVIL_TYPE = '\u001b]0;pwned\u0007\u001b[2J\u009b2Kforged\n12:00:00  stripe  paid  #1  signed';
  let typed: number;
  let raw: number;

  beforeAll(async () => {
    const from = serve.stdout().length;
    typed = ((await (await post('homelab', JSON.stringify({ type: EVIL_TYPE }), { 'content-type': 'application/json' })).json()) as { id: number }).id;
    const answer = await rawDelivery('/webhooks/homelab', Buffer.from('X-Evil: a\u009b2Jb', 'latin1'), Buffer.from('not json \u001b[2J\r\u0007 end', 'latin1'));
    raw = Number(/"id":(\d+)/.exec(answer)?.[1]);
    expect(answer, answer).toMatch(/^HTTP\/1\.1 200/);
    expect(raw).toBeGreaterThan(typed);
    await waitForOutput(() => serve.stdout().slice(from), new RegExp(`#${raw}\\b`));
  });

  it("serve's per-delivery line: one line, escaped, no forged line", () => {
    const out = serve.stdout();
    expect(out).not.toMatch(RAW_CONTROL);
    const line = out.split('\n').find((candidate) => candidate.includes(`#${typed} `) || candidate.endsWith(`#${typed}  open`))!;
    expect(line).toContain('\\x1b]0;pwned\\x07\\x1b[2J\\x9b2Kforged\\x0a12:00:00');
    expect(out).not.toMatch(/^12:00:00  stripe/m);
  });

  it('events, show, and their escapes; --json keeps JSON escaping and the exact text', async () => {
    const events = await cli('events');
    expect(events.code).toBe(0);
    expect(events.stdout).not.toMatch(RAW_CONTROL);
    expect(events.stdout).toContain('\\x1b]0;pwned');
    expect(events.stdout).not.toMatch(/^12:00:00/m);

    const show = await cli('show', String(raw));
    expect(show.code).toBe(0);
    expect(show.stdout).not.toMatch(RAW_CONTROL);
    expect(show.stdout).toMatch(/x-evil\s+a\\x9b2Jb/);
    expect(show.stdout).toContain('not json \\x1b[2J\\x0d\\x07 end');
    const showTyped = await cli('show', String(typed));
    expect(showTyped.stdout).not.toMatch(RAW_CONTROL);
    expect(showTyped.stdout.split('\n')[0]).toContain('\\x1b]0;pwned');

    const json = await cli('events', '--json');
    const summaries = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as { id: number; event_type: string | null });
    expect(summaries.find((event) => event.id === typed)!.event_type).toBe(EVIL_TYPE);
  });

  it("replay prints a handler's answer escaped", async () => {
    consumer.respond = (_request, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok \u001b[2J\u001b]0;x\u0007');
    const run = await cli('replay', String(typed), '--to', consumer.url('/answer'));
    consumer.respond = (_request, res) => res.writeHead(200).end('ok');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toMatch(RAW_CONTROL);
    expect(run.stdout).toContain('ok \\x1b[2J\\x1b]0;x\\x07');
  });
});

describe('the terminal stream coalesces only real bursts (#26.10)', () => {
  it('a 10-event burst with its 10 forwards prints all 20 lines', async () => {
    const from = serve.stdout().length;
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => post('shop', JSON.stringify({ type: 'burst.ten', i }))));
    const ids = await Promise.all(answers.map(async (answer) => ((await answer.json()) as { id: number }).id));
    const out = await waitForOutput(
      () => serve.stdout().slice(from),
      (text) => ids.every((id) => new RegExp(`#${id}  open$`, 'm').test(text) && new RegExp(`→ .*/shop  200  \\d+ ms  #${id}$`, 'm').test(text)),
    );
    expect(out).not.toMatch(/more in the last second/);
  });
});

describe('providers with a long hint (#26.10)', () => {
  it('keeps the table whole and prints the advice under it', async () => {
    const run = await cli('providers');
    expect(run.code).toBe(0);
    const [table, notes] = run.stdout.split('\n\n');
    const rows = table!.split('\n');
    const secretAt = rows[0]!.indexOf('SECRET');
    const receivesAt = rows[0]!.indexOf('RECEIVES AT');
    for (const row of rows.slice(1)) {
      expect(row.slice(secretAt), row).toMatch(/^(configured|missing|-)\s/);
      expect(row.slice(receivesAt), row).toMatch(/^http:\/\//);
    }
    expect(rows.find((row) => row.startsWith('gh '))).toMatch(/listening \(see below\)|error \(see below\)/);
    expect(notes).toMatch(/^ {2}gh: .*HARDENING_UNSET_SECRET/m);
  });
});

describe('events --follow (#26.10)', () => {
  it('keeps its columns as ids and types grow, then ends in one line when the instance stops', async () => {
    const child = spawn(process.execPath, [BIN, 'events', '--follow', '--data-dir', dataDir, '--limit', '2'], { env: { ...process.env, SWITCHBOARD_TOKEN: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (err += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await waitForOutput(() => err, /following new events/);
    const types = ['a', 'a.much.longer.event.type.than.the.column.has.room.for', 'b'];
    for (let i = 0; i < 12; i++) await post('homelab', JSON.stringify({ type: types[i % 3], i }));
    await waitForOutput(() => out, (text) => text.trim().split('\n').length >= 1 + 2 + 12, 30_000);
    const rows = out.trim().split('\n');
    expect(rows[0]).toMatch(/^ID\s+TIME\s+PROVIDER\s+TYPE\s+TRUST\s+SIZE$/);
    const trustAt = rows[0]!.indexOf('TRUST');
    const sizeAt = rows[0]!.indexOf('SIZE');
    for (const row of rows.slice(1)) {
      expect(row.slice(trustAt, trustAt + 4), row).toBe('open');
      expect(row.slice(sizeAt), row).toMatch(/^\d+ B$/);
    }
    expect(rows.some((row) => row.includes('…'))).toBe(true);

    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    expect(await exited).toBe(1);
    expect(err).not.toMatch(/\n\s+at .+:\d+:\d+/);
    expect(err).not.toMatch(/undici|TypeError|terminated/);
    expect(err.trim().split('\n').at(-1)).toMatch(/^switchboard: the switchboard on 127\.0\.0\.1:\d+ stopped/);
  });
});

describe('the token goes only to the instance that owns the data dir (#22.14)', () => {
  let fake: Server;
  let fakeUrl: string;
  let relayTo: string | undefined;
  const seen: IncomingMessage['headers'][] = [];

  beforeAll(async () => {
    // Another account's program on the port a stale control-url names: it answers like switchboard.
    fake = createServer(async (req, res) => {
      seen.push(req.headers);
      if (req.url?.startsWith('/identity') && relayTo) {
        // The relay attack: ask the real instance, pass its proof on.
        const real = await fetch(`${relayTo}${req.url}`);
        res.writeHead(real.status, { 'content-type': 'application/json' }).end(await real.text());
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(req.url?.startsWith('/identity') ? JSON.stringify({ proof: '0'.repeat(64) }) : '{"providers":[]}');
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    fakeUrl = `http://127.0.0.1:${(fake.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => fake.close(() => resolve())));

  it('a listener on a stale recorded URL gets no token, and the CLI says why in one line', async () => {
    const victim = join(dir, 'victim');
    const real = await spawnServe(['--data-dir', victim, '--port', '0', '--control-port', '0', '--database-url', 'memory://', '--quiet']);
    try {
      const token = (await readFile(join(victim, 'control-token'), 'utf8')).trim();
      // Works against the real instance…
      expect((await runCli(['providers', '--data-dir', victim])).code).toBe(0);
      // …but not once the recorded URL points elsewhere (the instance crashed; something took the port).
      await writeFile(join(victim, 'control-url'), `${fakeUrl}\n`);
      for (const relay of [undefined, real.control]) {
        relayTo = relay;
        seen.length = 0;
        const run = await runCli(['providers', '--data-dir', victim]);
        expect(run.code).toBe(2);
        expect(run.stderr.trim().split('\n')).toHaveLength(1);
        expect(run.stderr).toMatch(/is not the switchboard of .* so the control token was not sent/);
        expect(seen.length).toBeGreaterThan(0);
        for (const headers of seen) {
          expect(headers.authorization).toBeUndefined();
          expect(JSON.stringify(headers)).not.toContain(token);
        }
      }
      // An explicit --control-url is the user's own choice: no identity check.
      seen.length = 0;
      relayTo = undefined;
      const explicit = await runCli(['providers', '--json', '--control-url', real.control, '--data-dir', join(dir, 'elsewhere')], { SWITCHBOARD_TOKEN: token });
      expect(explicit.code, explicit.stderr).toBe(0);
    } finally {
      real.child.kill('SIGTERM');
      await real.exited;
    }
  });
});

describe('messages (#26.10)', () => {
  it('export --since yesterday gives an example; import of a missing file or a HAR is one line', async () => {
    const since = await runCli(['export', '--since', 'yesterday', '--data-dir', join(dir, 'nothing')]);
    expect(since.code).toBe(2);
    expect(since.stderr).toMatch(/--since takes an ISO-8601 date or time, e\.g\. --since \d{4}-\d\d-\d\d/);

    const missing = await runCli(['import', '/nonexistent', '--data-dir', join(dir, 'nothing')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe('switchboard: cannot import /nonexistent: no such file\n');

    const har = join(dir, 'export.har');
    await writeFile(har, JSON.stringify({ log: { version: '1.2', creator: { name: 'switchboard', version: '0.1.0' }, entries: [] } }, null, 2));
    const refused = await runCli(['import', har, '--data-dir', join(dir, 'nothing')]);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/it is a HAR file, and switchboard imports only its own NDJSON exports/);
  });
});
