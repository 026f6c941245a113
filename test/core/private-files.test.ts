import { chmod, lstat, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describePermissionFix, fixDataDirPermissions } from '../../src/core/private-files.js';

const mode = async (path: string) => (await lstat(path)).mode & 0o777;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchboard-perms-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** A data dir as an older switchboard left it under umask 022: dirs 0755, PGlite's files 0666. */
async function openDataDir(): Promise<string> {
  const dataDir = join(dir, 'data');
  for (const sub of ['pgdata/pg_wal', 'pgdata/base/5']) await mkdir(join(dataDir, sub), { recursive: true });
  const files = ['pgdata/PG_VERSION', 'pgdata/pg_wal/000000010000000000000001', 'pgdata/base/5/1259', 'config.json', 'control-token', 'pgdata.lock', 'secrets.json'];
  for (const file of files) {
    await writeFile(join(dataDir, file), 'x');
    await chmod(join(dataDir, file), 0o666);
  }
  for (const sub of ['', 'pgdata', 'pgdata/pg_wal', 'pgdata/base', 'pgdata/base/5']) await chmod(join(dataDir, sub), 0o755);
  return dataDir;
}

async function modesUnder(path: string): Promise<Map<string, number>> {
  const modes = new Map<string, number>();
  const walk = async (p: string) => {
    modes.set(p, await mode(p));
    if ((await lstat(p)).isDirectory()) for (const entry of await readdir(p)) await walk(join(p, entry));
  };
  await walk(path);
  return modes;
}

describe('fixDataDirPermissions', () => {
  it('makes the data dir 0700 and everything switchboard keeps in it 0700 (dirs) / 0600 (files), the WAL included', async () => {
    const dataDir = await openDataDir();
    const fixed = await fixDataDirPermissions(dataDir);
    expect(fixed).toEqual({ dirs: 5, files: 7, failed: [] });
    for (const [path, m] of await modesUnder(dataDir)) {
      expect({ path, mode: m.toString(8) }).toEqual({ path, mode: (await lstat(path)).isDirectory() ? '700' : '600' });
    }
    const line = describePermissionFix(dataDir, fixed);
    expect(line).toBe(`permissions: made ${dataDir} private to this account (5 directories set to 0700, 7 files to 0600); other accounts could read them`);
    // Nothing left to fix: no line on the next start.
    const again = await fixDataDirPermissions(dataDir);
    expect(again).toEqual({ dirs: 0, files: 0, failed: [] });
    expect(describePermissionFix(dataDir, again)).toBeNull();
  });

  it('narrows without widening: an owner-read-only file stays read-only', async () => {
    const dataDir = await openDataDir();
    await chmod(join(dataDir, 'control-token'), 0o444);
    await fixDataDirPermissions(dataDir);
    expect(await mode(join(dataDir, 'control-token'))).toBe(0o400);
  });

  it('neither follows nor changes symbolic links, and leaves what is not switchboard’s alone below the (now private) dir', async () => {
    const dataDir = await openDataDir();
    const outside = join(dir, 'outside.txt');
    await writeFile(outside, 'not ours');
    await chmod(outside, 0o644);
    await symlink(outside, join(dataDir, 'pgdata', 'link'));
    await mkdir(join(dataDir, 'Cache'));
    await writeFile(join(dataDir, 'Cache', 'entry'), 'electron cache');
    await chmod(join(dataDir, 'Cache', 'entry'), 0o644);
    await fixDataDirPermissions(dataDir);
    expect(await mode(outside)).toBe(0o644);
    expect(await mode(join(dataDir, 'Cache', 'entry'))).toBe(0o644);
    expect(await mode(dataDir)).toBe(0o700);
  });

  it('reports what it could not change instead of failing the start', () => {
    const line = describePermissionFix('/d', { dirs: 0, files: 0, failed: ['/d/pgdata/x (EPERM)'] });
    expect(line).toBe('permissions: could not make 1 path(s) private, e.g. /d/pgdata/x (EPERM): fix them with chmod');
  });
});
