import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openPgliteInWorker, type WorkerSqlClient } from '../../../src/core/store/pglite-worker.js';
import { CRASH_MESSAGE, crashDatabaseWorkers, damageDatabaseFiles } from '../../helpers/database-worker-crash.js';

// The embedded database's worker thread crashing for real (an uncaught error thrown in it,
// through Node's inspector: test/helpers/database-worker-crash.ts). The client says so once,
// and the next statement runs on a new worker over the same data; a worker that cannot start
// again is reported as the database being unavailable, never as a hang.

describe('a crash of the database worker', () => {
  let dir: string;
  let db: WorkerSqlClient;
  const crashes: Error[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchboard-worker-crash-'));
    db = await openPgliteInWorker(dir, { onCrash: (error) => crashes.push(error) });
    await db.exec('CREATE TABLE items (id int PRIMARY KEY)');
    await db.query('INSERT INTO items VALUES (1)');
  });
  afterAll(async () => {
    await db?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('is reported once, and the next statement runs on a new worker with the data kept', async () => {
    expect(await crashDatabaseWorkers()).toBe(1);
    await vi.waitFor(() => expect(crashes).toHaveLength(1), { timeout: 10_000 });
    expect(crashes[0]!.message).toBe(`the database worker crashed: ${CRASH_MESSAGE}`);
    expect(await db.query('SELECT id FROM items')).toEqual([{ id: 1 }]);
    expect(crashes).toHaveLength(1);
  });

  it('says the database is unavailable while a new worker cannot open it, and recovers after', async () => {
    const repair = await damageDatabaseFiles(dir);
    expect(await crashDatabaseWorkers()).toBe(1);
    await vi.waitFor(() => expect(crashes).toHaveLength(2), { timeout: 10_000 });
    await expect(db.query('SELECT id FROM items')).rejects.toMatchObject({ code: 'database_unavailable', message: expect.stringContaining('could not be opened') });
    await expect(db.query('SELECT id FROM items')).rejects.toMatchObject({ code: 'database_unavailable' });
    // A worker that never opened is not reported as a crash of a running database.
    expect(crashes).toHaveLength(2);
    await repair();
    expect(await db.query('SELECT id FROM items')).toEqual([{ id: 1 }]);
  });

  it('does not report the workers it ends itself (close, recycle)', async () => {
    await db.recycle();
    expect(await db.query('SELECT count(*)::int AS n FROM items')).toEqual([{ n: 1 }]);
    expect(crashes).toHaveLength(2);
  });
});
