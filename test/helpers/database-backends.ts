import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPgliteInWorker } from '../../src/core/store/pglite-worker.js';
import { openPglite, openPostgres, type SqlClient } from '../../src/core/store/sql-client.js';
import { createTestDatabase } from './postgres.js';

/**
 * The databases the store runs on, for `describe.each(…)('… on $name')`: the same statements
 * must behave alike on each. `open()` gives null where the backend is absent (PostgreSQL outside
 * CI, see createTestDatabase), and the suite then skips its tests. The caller closes `client`
 * (usually through the store) before `cleanup`, which removes what `open()` made.
 */
export interface DatabaseBackend {
  name: string;
  open: () => Promise<{ client: SqlClient; cleanup: () => Promise<void> } | null>;
}

export const PGLITE: DatabaseBackend = { name: 'PGlite', open: async () => ({ client: await openPglite('memory://'), cleanup: async () => {} }) };

export const PGLITE_IN_WORKER: DatabaseBackend = {
  name: 'PGlite in a worker thread',
  open: async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchboard-worker-'));
    return { client: await openPgliteInWorker(dir), cleanup: () => rm(dir, { recursive: true, force: true }) };
  },
};

/** A throwaway database on the real server (SWITCHBOARD_TEST_PG, by default 127.0.0.1:5432). */
export const POSTGRESQL: DatabaseBackend = {
  name: 'PostgreSQL',
  open: async () => {
    const db = await createTestDatabase();
    return db ? { client: await openPostgres(db.url), cleanup: db.drop } : null;
  },
};
