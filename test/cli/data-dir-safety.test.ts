import { chmod, chown, lstat, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JournalKey } from '../../src/core/journal/journal-key.js';
import { encodeRecord } from '../../src/core/journal/record.js';
import { serveFailure, spawnServe } from '../helpers/cli.js';
import { journalEvent } from '../helpers/journal.js';

// Issue #22.4: a data dir another account could write is refused, not repaired; nothing there is
// opened through a symbolic link; a journal record switchboard did not sign is never stored.
// The checks read owners and modes, so they hold when the tests run as root too.

const TOKEN = 'data-dir-safety-token-0123456789abcdef';
const serveArgs = (dataDir: string) => ['--data-dir', dataDir, '--port', '0', '--control-port', '0'];
let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'switchboard-dir-safety-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

async function freshDir(name: string): Promise<string> {
  const dir = join(root, name);
  await mkdir(dir, { mode: 0o700 });
  await chmod(dir, 0o700);
  return dir;
}

/** One line of the failure (the message, then its fix), never a stack trace. */
function expectOneLine(stderr: string, pattern: RegExp): void {
  const lines = stderr.split('\n').filter((line) => line.startsWith('switchboard: '));
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0], stderr).toMatch(pattern);
  expect(stderr).not.toMatch(/\n\s+at /);
}

describe('switchboard serve refuses a data dir another account could write', () => {
  it('a data dir writable by others (0777) or by its group (0770): exit 2, one line, nothing created in it', async () => {
    for (const mode of [0o777, 0o770, 0o1777]) {
      const dataDir = await freshDir(`writable-${mode.toString(8)}`);
      await chmod(dataDir, mode);
      const run = await serveFailure(serveArgs(dataDir), { SWITCHBOARD_TOKEN: TOKEN });
      expect(run.code, run.stderr).toBe(2);
      expectOneLine(run.stderr, new RegExp(`refusing the data dir ${dataDir}: it is writable by (other accounts|its group)`));
      expect(await readdir(dataDir)).toEqual([]);
      expect((await lstat(dataDir)).mode & 0o7777).toBe(mode);
    }
  });

  it('a data dir that belongs to another account: exit 2, one line', async () => {
    const dataDir = await freshDir('foreign');
    await chown(dataDir, 54_321, 54_321);
    const run = await serveFailure(serveArgs(dataDir), { SWITCHBOARD_TOKEN: TOKEN });
    expect(run.code, run.stderr).toBe(2);
    expectOneLine(run.stderr, /refusing the data dir .*foreign: it belongs to another account \(uid 54321\)/);
  });

  it('a journal dir writable by others, or a symbolic link, inside a private data dir: exit 2, one line', async () => {
    const writable = await freshDir('journal-writable');
    await mkdir(join(writable, 'journal'));
    await chmod(join(writable, 'journal'), 0o777);
    const first = await serveFailure(serveArgs(writable), { SWITCHBOARD_TOKEN: TOKEN });
    expect(first.code, first.stderr).toBe(2);
    expectOneLine(first.stderr, /refusing the journal directory .*journal-writable\/journal: it is writable by other accounts/);

    const linked = await freshDir('journal-link');
    const elsewhere = await freshDir('journal-elsewhere');
    await symlink(elsewhere, join(linked, 'journal'));
    const second = await serveFailure(serveArgs(linked), { SWITCHBOARD_TOKEN: TOKEN });
    expect(second.code, second.stderr).toBe(2);
    expectOneLine(second.stderr, /refusing the journal directory .*journal-link\/journal: it is a symbolic link/);
    expect(await readdir(elsewhere)).toEqual([]);
  });
});

describe('nothing in the data dir is opened through a symbolic link', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await freshDir('links');
    // A first start and a clean stop make the data dir as switchboard keeps it.
    const serve = await spawnServe(serveArgs(dataDir), { SWITCHBOARD_TOKEN: TOKEN });
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
  }, 120_000);

  it('a segment that links elsewhere is refused at start, and the file it points to is left as it was', async () => {
    const victim = join(root, 'victim-segment');
    await writeFile(victim, 'precious bytes that a torn-tail cut would truncate');
    const link = join(dataDir, 'journal', '0000000000000001.log');
    await symlink(victim, link);
    try {
      const run = await serveFailure(serveArgs(dataDir), { SWITCHBOARD_TOKEN: TOKEN });
      expect(run.code, run.stderr).toBe(2);
      expectOneLine(run.stderr, /cannot read the journal segment .*0000000000000001\.log: it is a symbolic link, which switchboard does not follow there/);
      expect(await readFile(victim, 'utf8')).toBe('precious bytes that a torn-tail cut would truncate');
    } finally {
      await rm(link);
    }
  }, 120_000);

  it('keys.bloom.tmp, control-url and control-token links are not written through', async () => {
    const victims = { 'keys.bloom.tmp': join(root, 'victim-bloom'), 'control-url': join(root, 'victim-url') };
    await writeFile(victims['keys.bloom.tmp'], 'bloom victim');
    await writeFile(victims['control-url'], 'url victim');
    await symlink(victims['keys.bloom.tmp'], join(dataDir, 'journal', 'keys.bloom.tmp'));
    await rm(join(dataDir, 'control-url'), { force: true });
    await symlink(victims['control-url'], join(dataDir, 'control-url'));
    const serve = await spawnServe(serveArgs(dataDir), { SWITCHBOARD_TOKEN: TOKEN });
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    expect(await readFile(victims['keys.bloom.tmp'], 'utf8')).toBe('bloom victim');
    expect(await readFile(victims['control-url'], 'utf8')).toBe('url victim');
    expect(serve.stderr()).toMatch(/could not write control-url/);
    expect(serve.stderr()).toMatch(/could not save the redelivery filter/);
    await rm(join(dataDir, 'journal', 'keys.bloom.tmp'));
    await rm(join(dataDir, 'control-url'));

    // The token file: read without following a link (another account's file is not our token).
    const token = join(dataDir, 'control-token');
    const theirs = join(root, 'their-token');
    await writeFile(theirs, 'a-token-someone-else-chose-0123456789\n');
    await rm(token, { force: true });
    await symlink(theirs, token);
    const run = await serveFailure(serveArgs(dataDir), { SWITCHBOARD_TOKEN: '' });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/control-token/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    await rm(token);
  }, 120_000);
});

describe('journal records are signed with the data dir key', () => {
  it('a record planted in a segment (valid CRC, no key) is skipped and reported, never stored', async () => {
    const dataDir = await freshDir('forged');
    const serve = await spawnServe(serveArgs(dataDir), { SWITCHBOARD_TOKEN: TOKEN });
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    expect(((await lstat(join(dataDir, 'journal', 'journal.key'))).mode & 0o777).toString(8)).toBe('600');
    // What another account would write: a well-formed record claiming a verified, signed delivery.
    const forged = encodeRecord(
      journalEvent(1_000_000, { provider: 'github', external_id: 'planted', trust_mode: 'signed', verified: true, verify_detail: 'github: X-Hub-Signature-256 verified' }),
      JournalKey.ephemeral(),
    );
    await writeFile(join(dataDir, 'journal', '0000000001000000.log'), forged, { mode: 0o600 });
    const again = await spawnServe(serveArgs(dataDir), { SWITCHBOARD_TOKEN: TOKEN });
    try {
      expect(again.stderr()).toMatch(/journal: 0000000001000000\.log ends in \d+ bytes whose signature does not match this data dir's journal key/);
      expect(again.stderr()).not.toMatch(/applying 1 events/);
      const response = await fetch(`${again.control}/api/listEvents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ external_id: 'planted' }),
      });
      expect(((await response.json()) as { events: unknown[] }).events).toEqual([]);
    } finally {
      again.child.kill('SIGTERM');
      expect(await again.exited).toBe(0);
    }
  }, 120_000);
});
