import { chmod, lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsDir } from '../../src/core/paths.js';
import { migrationVersions } from '../../src/core/store/migrations.js';
import { spawnServe } from '../helpers/cli.js';

const MIGRATIONS = await migrationVersions(migrationsDir());

// Issue 10 item 1: the embedded database, token and config are readable by this account only,
// whether the data dir is new or was left world-readable by an older version.

let root: string;
let dataDir: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'switchboard-cli-perms-'));
  dataDir = join(root, 'data');
});
afterAll(() => rm(root, { recursive: true, force: true }));

async function entries(dir: string): Promise<{ path: string; dir: boolean; mode: string }[]> {
  const found: { path: string; dir: boolean; mode: string }[] = [];
  const walk = async (path: string) => {
    const info = await lstat(path);
    found.push({ path, dir: info.isDirectory(), mode: (info.mode & 0o777).toString(8) });
    if (info.isDirectory()) for (const entry of await readdir(path)) await walk(join(path, entry));
  };
  await walk(dir);
  return found;
}

async function expectPrivate(dir: string) {
  const all = await entries(dir);
  expect(all.some((entry) => entry.path.includes(`${join('pgdata', 'pg_wal')}/`) && !entry.dir)).toBe(true);
  expect(all.filter((entry) => entry.mode !== (entry.dir ? '700' : '600'))).toEqual([]);
}

/** The start-up step lines of serve's stderr, without their time. */
const startupLines = (stderr: string) =>
  stderr
    .split('\n')
    .map((line) => line.replace(/^\d\d:\d\d:\d\d\.\d{3} /, ''))
    .filter((line) => /^(creating|opening|migrating|starting) (the|an) /.test(line));

describe('switchboard serve keeps its data private', () => {
  it('creates a new data dir 0700 with every file 0600 (pg_wal included), under the usual umask 022', async () => {
    // The child inherits this process's umask; make it the common default whatever vitest has.
    const previous = process.umask(0o022);
    let serve;
    try {
      serve = await spawnServe(['--data-dir', dataDir, '--port', '0', '--control-port', '0']);
    } finally {
      process.umask(previous);
    }
    try {
      expect(serve.stderr()).toMatch(/creating the database in .*data — first start only/);
      // Each start-up step once, in order (the desktop's start-up screen shows the same steps).
      expect(startupLines(serve.stderr())).toEqual([
        `creating the database in ${dataDir} — first start only, this takes a few seconds`,
        `migrating the database to the current schema (${MIGRATIONS.join(', ')})`,
        'starting the receiver and the control server',
      ]);
      await expectPrivate(dataDir);
    } finally {
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
    }
    await expectPrivate(dataDir);
  });

  it('repairs a data dir left 0755 / 0666 (as PGlite wrote it before) and says so in one line', async () => {
    const before = await entries(dataDir);
    for (const entry of before) await chmod(entry.path, entry.dir ? 0o755 : 0o666);
    const serve = await spawnServe(['--data-dir', dataDir, '--port', '0', '--control-port', '0']);
    try {
      const lines = serve.stderr().split('\n').filter((line) => line.includes('permissions:'));
      expect(lines).toHaveLength(1);
      const dirs = before.filter((entry) => entry.dir).length;
      expect(lines[0]).toContain(`made ${dataDir} private to this account (${dirs} directories set to 0700, `);
      expect(serve.stderr()).not.toMatch(/first start only/);
      expect(startupLines(serve.stderr())).toEqual([`opening the database in ${dataDir}`, 'starting the receiver and the control server']);
      await expectPrivate(dataDir);
    } finally {
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
    }
  });
});
