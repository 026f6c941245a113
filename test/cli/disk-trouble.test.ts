import { execFileSync } from 'node:child_process';
import { appendFile, chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JournalKey } from '../../src/core/journal/journal-key.js';
import { encodeRecord } from '../../src/core/journal/record.js';
import { serveFailure, spawnServe } from '../helpers/cli.js';
import { journalEvent } from '../helpers/journal.js';

// Issue #22.5: disk trouble is one line naming the path, the cause and the fix, and /healthz is
// unhealthy while deliveries cannot be stored. An account's own modes do not stop root, so as
// root (CI containers, this machine) a read-only bind mount, an immutable file or a tiny tmpfs
// makes the same trouble; each test says what it needs and is skipped when neither works.

const TOKEN = 'disk-trouble-token-0123456789abcdef0123';
const serveArgs = (dataDir: string) => ['--data-dir', dataDir, '--port', '0', '--control-port', '0'];
const CONFIG = JSON.stringify({ providers: [{ name: 'homelab', kind: 'open' }] });
const isRoot = process.getuid?.() === 0;
const run = (command: string, args: string[]): boolean => {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'switchboard-disk-trouble-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

async function preparedDataDir(name: string): Promise<string> {
  const dataDir = join(root, name);
  await mkdir(dataDir, { mode: 0o700 });
  await writeFile(join(dataDir, 'config.json'), CONFIG, { mode: 0o600 });
  const serve = await spawnServe(serveArgs(dataDir), { SWITCHBOARD_TOKEN: TOKEN });
  serve.child.kill('SIGTERM');
  expect(await serve.exited).toBe(0);
  return dataDir;
}

/** As root, makes `dir` read-only with a read-only bind mount (modes do not stop root). Returns the undo, or null. */
function makeReadOnly(dir: string): (() => Promise<void>) | null {
  if (!run('mount', ['--bind', dir, dir])) return null;
  if (!run('mount', ['-o', 'remount,bind,ro', dir])) {
    run('umount', [dir]);
    return null;
  }
  return async () => {
    run('umount', [dir]);
  };
}

describe('disk trouble', () => {
  it('a journal dir this account cannot write: /healthz 503 with the reason, one log line, and healthy again once fixed', async () => {
    const dataDir = await preparedDataDir('journal-ro');
    const journal = join(dataDir, 'journal');
    if (!isRoot) await chmod(journal, 0o500);
    const undo = isRoot ? makeReadOnly(journal) : async () => chmod(journal, 0o700);
    if (!undo) return; // root without mount: nothing here can make the dir unwritable
    const serve = await spawnServe(serveArgs(dataDir), { SWITCHBOARD_TOKEN: TOKEN });
    try {
      const health = await fetch(`${serve.receiver}/healthz`);
      expect(health.status).toBe(503);
      // The tunneled receiver says so without naming local paths; the loopback control port says why.
      const body = (await health.json()) as { status: string; reason: string };
      expect(body).toEqual({ status: 'unhealthy', reason: expect.stringMatching(/^deliveries cannot be stored right now/) });
      expect(body.reason).not.toContain(dataDir);
      const control = await fetch(`${serve.control}/healthz`);
      expect(control.status).toBe(503);
      const why = (await control.json()) as { status: string; reason: string };
      expect(why.reason).toContain(journal);
      expect(why.reason).toMatch(/permission denied|read-only/);
      const delivery = await fetch(`${serve.receiver}/webhooks/homelab`, { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
      expect(delivery.status).toBe(503);
      const again = await fetch(`${serve.receiver}/webhooks/homelab`, { method: 'POST', body: '{"a":2}', headers: { 'content-type': 'application/json' } });
      expect(again.status).toBe(503);
      const lines = serve.stderr().split('\n').filter((line) => line.includes(journal) && /deliveries are answered 503/.test(line));
      expect(lines, serve.stderr()).toHaveLength(1);
      expect(serve.stderr()).not.toMatch(/is the disk full\?/);
      await undo();
      const fixed = await fetch(`${serve.receiver}/webhooks/homelab`, { method: 'POST', body: '{"a":3}', headers: { 'content-type': 'application/json' } });
      expect(fixed.status).toBe(200);
      expect((await fetch(`${serve.receiver}/healthz`)).status).toBe(200);
    } finally {
      await undo();
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  }, 180_000);

  it('a torn tail in a segment that cannot be cut: one warning at start, and the intact records are stored', async () => {
    const dataDir = await preparedDataDir('torn-ro');
    const key = await JournalKey.load(join(dataDir, 'journal'));
    const segment = join(dataDir, 'journal', '0000000000100000.log');
    const record = encodeRecord(journalEvent(100_000, { provider: 'homelab', trust_mode: 'open', verified: false, external_id: 'kept' }), key);
    await writeFile(segment, Buffer.concat([record, record.subarray(0, 40)]), { mode: 0o600 });
    let undo: () => Promise<void>;
    if (!isRoot) {
      await chmod(segment, 0o400);
      undo = async () => chmod(segment, 0o600);
    } else if (run('chattr', ['+i', segment])) {
      undo = async () => void run('chattr', ['-i', segment]);
    } else {
      return; // root on a file system without immutable files: nothing can make the file read-only
    }
    try {
      const serve = await spawnServe(serveArgs(dataDir), { SWITCHBOARD_TOKEN: TOKEN });
      try {
        const lines = serve.stderr().split('\n').filter((line) => line.includes('0000000000100000.log'));
        expect(lines.some((line) => /cannot cut the torn record off the journal segment .*: (permission denied|operation not permitted) — it is skipped again at the next start/.test(line)), serve.stderr()).toBe(true);
        expect(serve.stderr()).not.toMatch(/\n\s+at /);
        const listed = await fetch(`${serve.control}/api/listEvents`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ external_id: 'kept' }),
        });
        expect(((await listed.json()) as { events: unknown[] }).events).toHaveLength(1);
      } finally {
        serve.child.kill('SIGTERM');
        await serve.exited;
      }
    } finally {
      await undo();
    }
  }, 180_000);

  it('a full disk at start: one line naming the path, the cause and the fix (root: a 4 MB tmpfs)', async () => {
    if (!isRoot) return; // an unprivileged account cannot mount a small file system
    const mountPoint = join(root, 'small');
    await mkdir(mountPoint);
    if (!run('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mountPoint])) return;
    try {
      const dataDir = join(mountPoint, 'data');
      await mkdir(dataDir, { mode: 0o700 });
      // Fill what is left, as a full disk would be.
      await appendFile(join(mountPoint, 'filler'), Buffer.alloc(3 * 1024 * 1024)).catch(() => undefined);
      const failed = await serveFailure(serveArgs(dataDir), { SWITCHBOARD_TOKEN: TOKEN });
      expect(failed.code, failed.stderr).toBe(2);
      const lines = failed.stderr.split('\n').filter((line) => line.startsWith('switchboard: '));
      expect(lines, failed.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`cannot .*${dataDir}.*: the disk is full`));
      expect(failed.stderr).toMatch(/fix: free some disk space/);
      expect(failed.stderr).not.toMatch(/PGlite failed to initialize|\n\s+at /);
      expect(await readdir(mountPoint)).toContain('data');
    } finally {
      run('umount', [mountPoint]);
    }
  }, 180_000);
});
