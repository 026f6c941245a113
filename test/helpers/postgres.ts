import pg from 'pg';

export const POSTGRES_ADMIN_URL = process.env.SWITCHBOARD_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * A throwaway database on the real PostgreSQL server. Skips loudly outside CI when no server
 * answers; in CI a missing server is a failure.
 */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> } | null> {
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 3_000 });
  try {
    await admin.connect();
  } catch (error) {
    if (process.env.CI) throw new Error(`PostgreSQL is required in CI: ${(error as Error).message}`);
    console.warn(`\n*** PostgreSQL not reachable at ${POSTGRES_ADMIN_URL}: skipping PostgreSQL tests ***\n`);
    return null;
  }
  const name = `switchboard_test_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
