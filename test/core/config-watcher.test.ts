import { sign } from '@octokit/webhooks-methods';
import { mkdir, mkdtemp, readFile, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeChanges } from '../../src/core/config-watcher.js';
import { parseConfig } from '../../src/core/config.js';
import { createSwitchboard, type Switchboard } from '../../src/core/switchboard.js';
import { memoryLogger, TEST_TOKEN } from '../helpers/core.js';

/**
 * Hand edits of config.json, made the ways editors and people make them, against a real
 * switchboard reading a real file: each must reach the receiver, and each refusal must leave
 * the previous configuration answering.
 */

const OLD_SECRET = 'hand-typed-secret-before-rotation';
const NEW_SECRET = 'hand-typed-secret-after-rotation';
const WAIT_MS = 8_000;

interface Running {
  sb: Switchboard;
  logger: ReturnType<typeof memoryLogger>;
  /** Waits for a log line matching `pattern` written after `from` (an index into logger.lines). */
  logged(pattern: RegExp, from: number): Promise<string>;
  deliver(provider: string, body: string, secret: string, extra?: Record<string, string>): Promise<number>;
}

async function start(dataDir: string, configPath?: string): Promise<Running> {
  const logger = memoryLogger();
  const sb = createSwitchboard({
    dataDir,
    configPath,
    databaseUrl: 'memory://',
    token: TEST_TOKEN,
    logger,
    rendererDir: null,
    env: {},
    receiverPort: 0,
    controlPort: 0,
  });
  await sb.start();
  return {
    sb,
    logger,
    async logged(pattern, from) {
      const deadline = Date.now() + WAIT_MS;
      for (;;) {
        const line = logger.lines.slice(from).find((candidate) => pattern.test(candidate));
        if (line) return line;
        if (Date.now() > deadline) throw new Error(`no log line like ${pattern} within ${WAIT_MS} ms; got:\n${logger.lines.slice(from).join('\n')}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async deliver(provider, body, secret, extra = {}) {
      const response = await fetch(`${sb.url.receiver}/webhooks/${provider}`, {
        method: 'POST',
        body,
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'push',
          'x-github-delivery': crypto.randomUUID(),
          'x-hub-signature-256': await sign(secret, body),
          ...extra,
        },
      });
      await response.arrayBuffer();
      return response.status;
    },
  };
}

const githubConfig = (secret: string, extra: Record<string, unknown> = {}) =>
  `${JSON.stringify({ providers: [{ name: 'gh', kind: 'github', secrets: [{ value: secret }], ...extra }] }, null, 2)}\n`;

/** What vim, VS Code and our own saves do: write a temp file beside it, rename it over. */
async function renameReplace(path: string, text: string): Promise<void> {
  const temp = `${path}.swp-${process.pid}`;
  await writeFile(temp, text);
  await rename(temp, path);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('config.json edited by hand while switchboard runs (data dir)', () => {
  let dataDir: string;
  let configPath: string;
  let run: Running;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'switchboard-watch-'));
    configPath = join(dataDir, 'config.json');
    run = await start(dataDir);
  });
  afterAll(async () => {
    await run?.sb.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('picks up a config.json created after start: the provider appears and answers', async () => {
    expect(run.sb.config.providers).toEqual([]);
    expect(await run.deliver('gh', '{"zen":"before"}', OLD_SECRET)).toBe(404);
    const from = run.logger.lines.length;
    await writeFile(configPath, githubConfig(OLD_SECRET));
    expect(await run.logged(/reloaded: providers \+gh$/, from)).toContain(configPath);
    expect(await run.deliver('gh', '{"zen":"after"}', OLD_SECRET)).toBe(200);
  });

  it('follows the file after a UI/API save replaced it (rename over the watched inode)', async () => {
    const fromSave = run.logger.lines.length;
    const response = await fetch(`${run.sb.url.control}/api/addProvider`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ provider: { name: 'hooks', kind: 'open' } }),
    });
    expect(response.status).toBe(200);
    await sleep(500); // the watcher sees our own save; it must stay quiet about it
    const from = run.logger.lines.length;
    // Now a hand edit in place (truncate + write, as `echo > file` or nano do).
    const raw = JSON.parse(await readFile(configPath, 'utf8'));
    raw.providers = raw.providers.filter((provider: { name: string }) => provider.name !== 'hooks');
    await writeFile(configPath, JSON.stringify(raw));
    expect(await run.logged(/reloaded: providers -hooks$/, from)).toBeTruthy();
    expect(run.logger.lines.slice(fromSave).filter((line) => /reloaded|not applied/.test(line))).toHaveLength(1);
    const answer = await fetch(`${run.sb.url.receiver}/webhooks/hooks`, { method: 'POST', body: '{}' });
    expect(answer.status).toBe(404);
  });

  it('applies a hand-rotated secret: the old signature is refused with 401, the new one accepted', async () => {
    const from = run.logger.lines.length;
    await renameReplace(configPath, githubConfig(NEW_SECRET));
    const line = await run.logged(/reloaded: providers gh \(secrets changed\)$/, from);
    expect(line).not.toContain(NEW_SECRET);
    expect(line).not.toContain(OLD_SECRET);
    expect(await run.deliver('gh', '{"zen":"rotated"}', OLD_SECRET)).toBe(401);
    expect(await run.deliver('gh', '{"zen":"rotated"}', NEW_SECRET)).toBe(200);
  });

  it('refuses a broken edit in one line naming the JSON path, and keeps the old config answering', async () => {
    const from = run.logger.lines.length;
    await writeFile(configPath, JSON.stringify({ providers: [{ name: 'gh', kind: 'gitbub', secrets: [{ value: NEW_SECRET }] }] }));
    const line = await run.logged(/not applied/, from);
    expect(line).toMatch(/config\.json not applied: providers\[0\]\.kind: .* — keeping the previous configuration$/);
    expect(line).not.toContain(NEW_SECRET);
    expect(await run.deliver('gh', '{"zen":"still"}', NEW_SECRET)).toBe(200);

    const fromJson = run.logger.lines.length;
    await writeFile(configPath, '{ "providers": [ ], }');
    expect(await run.logged(/config\.json not applied: not valid JSON .* — keeping the previous configuration$/, fromJson)).toBeTruthy();
    expect(await run.deliver('gh', '{"zen":"still"}', NEW_SECRET)).toBe(200);

    // Fixing it is said too, even when the fix is the configuration already running.
    const fromFix = run.logger.lines.length;
    await writeFile(configPath, githubConfig(NEW_SECRET));
    expect(await run.logged(/config\.json reloaded: no changes$/, fromFix)).toBeTruthy();
    // Each refusal was logged once, not once per event the editor caused.
    expect(run.logger.lines.slice(from).filter((line) => /not applied/.test(line))).toHaveLength(2);
  });

  it('keeps the running configuration when the file is deleted, and applies it when it comes back', async () => {
    const from = run.logger.lines.length;
    await unlink(configPath);
    expect(await run.logged(/config\.json was removed — keeping the current configuration/, from)).toBeTruthy();
    expect(await run.deliver('gh', '{"zen":"deleted"}', NEW_SECRET)).toBe(200);

    const fromBack = run.logger.lines.length;
    await writeFile(configPath, githubConfig(NEW_SECRET, { enabled: false }));
    expect(await run.logged(/reloaded: providers gh \(disabled\)$/, fromBack)).toBeTruthy();
    expect(await run.deliver('gh', '{"zen":"back"}', NEW_SECRET)).toBe(404);
  });

  it('applies a delete-then-create save and a backup-rename save (vim with backupcopy=no)', async () => {
    let from = run.logger.lines.length;
    await unlink(configPath);
    await writeFile(configPath, githubConfig(OLD_SECRET));
    expect(await run.logged(/reloaded: providers gh \(enabled, secrets changed\)$/, from)).toBeTruthy();
    expect(run.logger.lines.slice(from).some((line) => /was removed/.test(line))).toBe(false);
    expect(await run.deliver('gh', '{"zen":"vim"}', OLD_SECRET)).toBe(200);

    from = run.logger.lines.length;
    await rename(configPath, `${configPath}~`);
    await writeFile(configPath, githubConfig(NEW_SECRET));
    await unlink(`${configPath}~`);
    expect(await run.logged(/reloaded: providers gh \(secrets changed\)$/, from)).toBeTruthy();
    expect(await run.deliver('gh', '{"zen":"vim"}', NEW_SECRET)).toBe(200);
    expect(await run.deliver('gh', '{"zen":"vim"}', OLD_SECRET)).toBe(401);
  });

  it('names settings that need a restart, and never a value', async () => {
    const from = run.logger.lines.length;
    const raw = JSON.parse(await readFile(configPath, 'utf8'));
    await renameReplace(configPath, JSON.stringify({ ...raw, receiver: { port: 7999 }, replay: { timeout_ms: 2_000 } }));
    const line = await run.logged(/reloaded:/, from);
    expect(line).toMatch(/reloaded: receiver\.port \(takes effect after a restart\); replay\.timeout_ms$/);
    expect(run.sb.config.replay.timeout_ms).toBe(2_000);
  });

  it('warns right after the reload when an added provider names an environment variable that is not set', async () => {
    const from = run.logger.lines.length;
    const raw = JSON.parse(await readFile(configPath, 'utf8'));
    raw.providers.push({ name: 'billing', kind: 'stripe', secrets: [{ env: 'SB_TEST_NEVER_SET_SECRET' }] });
    await renameReplace(configPath, JSON.stringify(raw));
    await run.logged(/reloaded: providers \+billing$/, from);
    const lines = run.logger.lines.slice(from);
    const reload = lines.findIndex((line) => /reloaded/.test(line));
    expect(lines[reload + 1]).toBe(
      'warn provider "billing" has no usable secret: set SB_TEST_NEVER_SET_SECRET in the environment switchboard starts with and restart it, or store the secret in config.json / the UI',
    );
  });
});

describe('a first save from the UI, and an empty file (#26.10)', () => {
  let dataDir: string;
  let run: Running;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'switchboard-watch-ui-'));
    run = await start(dataDir);
  });
  afterAll(async () => {
    await run?.sb.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('a provider added in the UI with no config.json yet logs no "reloaded: no changes"', async () => {
    const from = run.logger.lines.length;
    await run.sb.updateConfig({ providers: [{ name: 'hooks', kind: 'open' }] } as never);
    await sleep(1_500);
    expect(run.logger.lines.slice(from).filter((line) => /reloaded/.test(line))).toEqual([]);
    expect(run.sb.config.providers.map(({ name }) => name)).toEqual(['hooks']);
  });

  it('an emptied config.json is refused saying it is empty, not "no comments or trailing commas"', async () => {
    const from = run.logger.lines.length;
    await writeFile(join(dataDir, 'config.json'), '');
    const line = await run.logged(/not applied/, from);
    expect(line).toMatch(/config\.json not applied: the file is empty: write \{\}/);
    expect(line).not.toMatch(/comments|trailing commas/);
    expect(run.sb.config.providers.map(({ name }) => name)).toEqual(['hooks']);
  });

  it('an empty config.json at start is one line saying so', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchboard-watch-empty-'));
    await writeFile(join(dir, 'config.json'), '\n');
    await expect(start(dir)).rejects.toThrow(/config\.json: the file is empty/);
    await rm(dir, { recursive: true, force: true });
  });
});

describe('config.json elsewhere (--config FILE)', () => {
  let root: string;
  let run: Running | undefined;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'switchboard-watch-elsewhere-'));
  });
  afterAll(async () => {
    await run?.sb.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('watches a --config file in another directory, and one reached through a symlink', async () => {
    const dataDir = join(root, 'data');
    const projectDir = join(root, 'project');
    const dotfiles = join(root, 'dotfiles');
    await mkdir(projectDir);
    await mkdir(dotfiles);
    const target = join(dotfiles, 'switchboard.json');
    await writeFile(target, githubConfig(OLD_SECRET));
    // A symlinked config: its directory never changes, only the target's does (the poll sees it).
    const link = join(projectDir, 'switchboard.json');
    await symlink(target, link);
    run = await start(dataDir, link);
    expect(await run.deliver('gh', '{"zen":"linked"}', OLD_SECRET)).toBe(200);

    const from = run.logger.lines.length;
    await renameReplace(target, githubConfig(NEW_SECRET));
    expect(await run.logged(/switchboard\.json reloaded: providers gh \(secrets changed\)$/, from)).toContain(link);
    expect(await run.deliver('gh', '{"zen":"linked"}', OLD_SECRET)).toBe(401);
    expect(await run.deliver('gh', '{"zen":"linked"}', NEW_SECRET)).toBe(200);
  });

  it('watches a --config file whose directory did not exist at start', async () => {
    await run?.sb.stop();
    const later = join(root, 'later', 'config.json');
    run = await start(join(root, 'data2'), later);
    expect(run.sb.config.providers).toEqual([]);
    const from = run.logger.lines.length;
    await mkdir(join(root, 'later'));
    await writeFile(later, githubConfig(OLD_SECRET));
    expect(await run.logged(/reloaded: providers \+gh$/, from)).toBeTruthy();
    expect(await run.deliver('gh', '{"zen":"later"}', OLD_SECRET)).toBe(200);
  });
});

describe('describeChanges', () => {
  it('lists providers added, removed and changed by key, and sections by JSON path', () => {
    const before = parseConfig({
      providers: [
        { name: 'a', kind: 'github', secrets: [{ value: 'x' }] },
        { name: 'b', kind: 'open' },
        { name: 'q', kind: 'redis-stream', url: { value: 'redis://:pw@127.0.0.1:6379' }, stream: 's' },
      ],
    });
    const after = parseConfig({
      providers: [
        { name: 'a', kind: 'github', secrets: [{ env: 'A' }], tolerance_s: 10, forward_to: ['http://127.0.0.1:1/x'] },
        { name: 'c', kind: 'open' },
        { name: 'q', kind: 'redis-stream', url: { value: 'redis://:other@127.0.0.1:6379' }, stream: 's' },
      ],
      retention: { max_rows: 10 },
      database: { url: 'postgres://u:secretpw@127.0.0.1/x' },
    });
    const changes = describeChanges(before, after);
    expect(changes).toEqual([
      'providers a (forward_to, secrets changed, tolerance_s), +c, q (url changed), -b',
      'retention.max_rows',
      'database.url (takes effect after a restart)',
    ]);
    expect(JSON.stringify(changes)).not.toMatch(/pw|other|secretpw/);
    expect(describeChanges(before, before)).toEqual([]);
  });
});
