import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SqlClient } from './sql-client.js';

/**
 * Applies `migrations/NNNN_name.sql` in order, each in its own transaction, recording it in
 * schema_migrations. Re-running is a no-op. On PostgreSQL several instances may start at once,
 * so the whole run holds an advisory lock.
 */
const MIGRATION_LOCK_KEY = 7_777_778;

/** The migrations in `dir` (`NNNN_name`, without `.sql`), in the order they apply. */
export async function migrationVersions(dir: string): Promise<string[]> {
  return (await readdir(dir))
    .filter((file) => /^\d+_.+\.sql$/.test(file))
    .sort()
    .map((file) => file.replace(/\.sql$/, ''));
}

export async function migrate(client: SqlClient, dir: string, onPending?: (versions: string[]) => void): Promise<string[]> {
  const versions = await migrationVersions(dir);
  return client.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await tx.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set((await tx.query<{ version: string }>('SELECT version FROM schema_migrations')).map((row) => row.version));
    const pending = versions.filter((version) => !done.has(version));
    // Said once, before the first one runs: on a large database a migration can take minutes.
    if (pending.length > 0) onPending?.(pending);
    for (const version of pending) {
      await tx.exec(await readFile(join(dir, `${version}.sql`), 'utf8'));
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [version]);
    }
    return pending;
  });
}
