import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTemplatePath } from '../../../src/core/paths.js';
import { unpackDatabaseTemplate } from '../../../src/core/store/database-template.js';
import { openPglite } from '../../../src/core/store/sql-client.js';

// The template is built with the core (scripts/build-db-template.js, run by the test setup).

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'switchboard-template-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

async function modes(dir: string): Promise<string[]> {
  const wrong: string[] = [];
  const walk = async (path: string) => {
    const info = await lstat(path);
    const mode = info.mode & 0o777;
    if (mode !== (info.isDirectory() ? 0o700 : 0o600)) wrong.push(`${path} ${mode.toString(8)}`);
    if (info.isDirectory()) for (const entry of await readdir(path)) await walk(join(path, entry));
  };
  await walk(dir);
  return wrong;
}

describe('the empty database template', () => {
  it('is built', () => {
    expect(existsSync(databaseTemplatePath())).toBe(true);
  });

  it('unpacks into a new data dir, owner-only, and the embedded database opens it as its own', async () => {
    const dataDir = join(root, 'fresh');
    const pgdata = join(dataDir, 'pgdata');
    expect(await unpackDatabaseTemplate(pgdata)).toBe(true);
    expect((await readFile(join(pgdata, 'PG_VERSION'), 'utf8')).trim()).toMatch(/^\d+$/);
    expect(existsSync(join(pgdata, 'pg_wal'))).toBe(true);
    await expect(modes(pgdata)).resolves.toEqual([]);
    const db = await openPglite(dataDir);
    try {
      await db.exec('CREATE TABLE probe (x int); INSERT INTO probe VALUES (42);');
      expect(await db.query('SELECT x FROM probe')).toEqual([{ x: 42 }]);
    } finally {
      await db.close();
    }
    const again = await openPglite(dataDir);
    try {
      expect(await again.query('SELECT x FROM probe')).toEqual([{ x: 42 }]);
    } finally {
      await again.close();
    }
  });

  it('never touches a data dir that already holds a database', async () => {
    const pgdata = join(root, 'existing', 'pgdata');
    await mkdir(pgdata, { recursive: true });
    await writeFile(join(pgdata, 'PG_VERSION'), '18\n');
    expect(await unpackDatabaseTemplate(pgdata)).toBe(false);
    expect(await readdir(pgdata)).toEqual(['PG_VERSION']);
  });
});
