import { createServer, type Server } from 'node:net';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveFailure, spawnServe, type Serve } from '../helpers/cli.js';

let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'switchboard-cli-'));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

function expectOneClearLine(stderr: string, pattern: RegExp) {
  expect(stderr).toMatch(pattern);
  expect(stderr).not.toMatch(/\n\s+at .+:\d+:\d+/); // no stack trace
  expect(stderr).toMatch(/fix: /);
}

describe('switchboard serve', () => {
  let serve: Serve;

  it('starts with no config, prints URLs, the UI token and the Claude Code command', async () => {
    serve = await spawnServe(['--data-dir', dataDir, '--port', '0', '--control-port', '0']);
    const token = (await readFile(join(dataDir, 'control-token'), 'utf8')).trim();
    const out = serve.stdout();
    expect(out).toContain('No providers yet');
    expect(out).toContain(`${serve.control}/#token=${token}`);
    expect(out).toContain(`claude mcp add --transport http switchboard ${serve.control}/mcp --header "Authorization: Bearer ${token}"`);
    for (const base of [serve.receiver, serve.control]) {
      const response = await fetch(`${base}/healthz`);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ status: 'ok' });
    }
  });

  it('exits 0 on SIGTERM after closing cleanly', async () => {
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    expect(serve.stderr()).toMatch(/SIGTERM, finishing in-flight deliveries/);
  });

  it('takes the token from SWITCHBOARD_TOKEN and the providers from --config', async () => {
    const configPath = join(dataDir, 'other-config.json');
    await writeFile(configPath, JSON.stringify({ providers: [{ name: 'homelab', kind: 'open' }] }));
    const token = 'env-token-abcdefghijklmnopqrstuvwxyz012345';
    const run = await spawnServe(['--data-dir', dataDir, '--config', configPath, '--port', '0', '--control-port', '0'], { SWITCHBOARD_TOKEN: token });
    try {
      expect(run.stdout()).toContain(`#token=${token}`);
      expect(run.stdout()).toMatch(/homelab\s+http:\/\/127\.0\.0\.1:\d+\/webhooks\/homelab/);
      const answer = await fetch(`${run.receiver}/webhooks/homelab`, { method: 'POST', body: '{"hi":1}' });
      expect(answer.status).toBe(200);
    } finally {
      run.child.kill('SIGINT');
      expect(await run.exited).toBe(0);
    }
  });
});

describe('a provider whose secret is missing', () => {
  it('is named in the banner and the 503 with its variable, and says to restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchboard-cli-secret-'));
    await writeFile(
      join(dir, 'config.json'),
      JSON.stringify({
        providers: [
          { name: 'github', kind: 'github', secrets: [{ env: 'SB_TEST_GITHUB_WEBHOOK_SECRET' }] },
          { name: 'desk', kind: 'stripe', secrets: [{ stored: 'stripe-1' }] },
          { name: 'jobs', kind: 'redis-stream', url: { env: 'SB_TEST_REDIS_URL' }, stream: 'jobs' },
        ],
      }),
    );
    const run = await spawnServe(['--data-dir', dir, '--port', '0', '--control-port', '0'], { SB_TEST_GITHUB_WEBHOOK_SECRET: '' });
    try {
      const out = run.stdout();
      const advice = 'set SB_TEST_GITHUB_WEBHOOK_SECRET in the environment switchboard starts with and restart it, or store the secret in config.json / the UI';
      expect(out).toMatch(/github\s+http:\S+\/webhooks\/github {2}\(SECRET MISSING: deliveries get 503\)\n\s+fix: (.*)\n/);
      expect(out).toContain(`fix: ${advice}\n`);
      expect(out).toContain('fix: the secret stored as stripe-1 is kept by the desktop app, which switchboard serve cannot read');
      expect(out).toContain('fix: set SB_TEST_REDIS_URL in the environment switchboard starts with and restart it, or store the URL in config.json / the UI');
      const answer = await fetch(`${run.receiver}/webhooks/github`, { method: 'POST', body: '{}', headers: { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` } });
      expect(answer.status).toBe(503);
      expect(await answer.json()).toEqual({ error: 'secret_not_configured', hint: `provider "github" has no usable secret: ${advice}; then deliver again` });
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('serve refuses to start with one clear line and exit code 2', () => {
  it('on a broken config file, naming the JSON path', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchboard-cli-bad-'));
    await writeFile(join(dir, 'config.json'), JSON.stringify({ providers: [{ name: 'Bad Name', kind: 'github' }] }));
    const result = await serveFailure(['--data-dir', dir, '--port', '0', '--control-port', '0']);
    expect(result.code).toBe(2);
    expectOneClearLine(result.stderr, /config\.json: providers\[0\]\.name: a lowercase name/);
  });

  it('on a config file that is not JSON', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchboard-cli-bad-'));
    await writeFile(join(dir, 'config.json'), '{ "providers": [ ], }');
    const result = await serveFailure(['--data-dir', dir]);
    expect(result.code).toBe(2);
    expectOneClearLine(result.stderr, /not valid JSON/);
  });

  it('on a port in use, naming the port and the flag to change it', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const dir = await mkdtemp(join(tmpdir(), 'switchboard-cli-port-'));
      const result = await serveFailure(['--data-dir', dir, '--port', String(port), '--control-port', '0']);
      expect(result.code).toBe(2);
      expectOneClearLine(result.stderr, new RegExp(`receiver port ${port} .* already in use`));
      expect(result.stderr).toMatch(/--port/);
      // Said before the database is opened (#26.10): no seconds spent creating one first.
      expect(result.stderr).not.toMatch(/creating the database|opening the database/);
    } finally {
      blocker.close();
    }
  });

  it('on the same port for the receiver and the control server, saying so (not "another switchboard")', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchboard-cli-sameport-'));
    const result = await serveFailure(['--data-dir', dir, '--port', '47999', '--control-port', '47999']);
    expect(result.code).toBe(2);
    expectOneClearLine(result.stderr, /the receiver and the control server cannot share port 47999/);
    expect(result.stderr).not.toMatch(/another switchboard|already in use/);
  });

  it('on a SWITCHBOARD_TOKEN shorter than 24 characters, in one line naming the variable', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchboard-cli-shorttoken-'));
    for (const token of ['a', 'x'.repeat(23)]) {
      const result = await serveFailure(['--data-dir', dir, '--port', '0', '--control-port', '0'], { SWITCHBOARD_TOKEN: token });
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(/^switchboard: SWITCHBOARD_TOKEN .*at least 24 characters/);
      if (token.length > 1) expect(result.stderr).not.toContain(token); // never the token itself
    }
  });

  it('on an unwritable data dir', async () => {
    const result = await serveFailure(['--data-dir', '/etc/hostname/switchboard']);
    expect(result.code).toBe(2);
    expectOneClearLine(result.stderr, /data dir \/etc\/hostname\/switchboard is not writable/);
  });

  it('on an unreachable database', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchboard-cli-db-'));
    const result = await serveFailure(['--data-dir', dir, '--port', '0', '--control-port', '0', '--database-url', 'postgres://nobody:hunter2@127.0.0.1:1/none']);
    expect(result.code).toBe(2);
    expectOneClearLine(result.stderr, /cannot connect to PostgreSQL/);
    expect(result.stderr).not.toContain('hunter2');
  });

  it('on a control-token written by hand that is too short, instead of silently replacing it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchboard-cli-token-'));
    await writeFile(join(dir, 'control-token'), 'hunter2\n');
    const result = await serveFailure(['--data-dir', dir, '--port', '0', '--control-port', '0'], { SWITCHBOARD_TOKEN: '' });
    expect(result.code).toBe(2);
    expectOneClearLine(result.stderr, /control-token: a control token is one line of at least 32 characters/);
    expect(await readFile(join(dir, 'control-token'), 'utf8')).toBe('hunter2\n');
  });

  it('on a bad flag value', async () => {
    const result = await serveFailure(['--port', 'eighty']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--port must be a port number/);
  });

  it('on a journal it cannot read, naming the path, the cause and the fix (never a stack trace)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchboard-cli-journal-'));
    // A directory where a segment belongs: reading it fails (EISDIR) as an unreadable file would.
    await mkdir(join(dir, 'journal', '0000000000000001.log'), { recursive: true });
    const result = await serveFailure(['--data-dir', dir, '--port', '0', '--control-port', '0']);
    expect(result.code).toBe(2);
    expectOneClearLine(result.stderr, /cannot read the journal segment .*0000000000000001\.log: a directory stands where a file belongs/);
  });

  it('when another switchboard holds the data dir', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchboard-cli-lock-'));
    const first = await spawnServe(['--data-dir', dir, '--port', '0', '--control-port', '0']);
    try {
      const second = await serveFailure(['--data-dir', dir, '--port', '0', '--control-port', '0']);
      expect(second.code).toBe(2);
      expectOneClearLine(second.stderr, /in use by another switchboard/);
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
  });
});
