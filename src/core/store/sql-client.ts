import { Blob } from 'node:buffer';
import { existsSync } from 'node:fs';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { SwitchboardError } from '../errors.js';
import { unpackDatabaseTemplate } from './database-template.js';

/**
 * The one seam between the store and a Postgres: embedded PGlite or a real server. The store
 * writes the same SQL for both; nothing above the store knows which one it talks to.
 */
export interface QueryOptions {
  /**
   * Planner settings (`enable_seqscan = off`) for this statement alone, applied with SET LOCAL.
   * The client runs the statement and its settings as one unit: a read never opens a transaction
   * that other statements could queue behind (issue #22: concurrent searches deadlocked the
   * embedded database that way).
   */
  settings?: readonly string[];
}

export interface SqlClient {
  readonly kind: 'pglite' | 'postgres';
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<Row[]>;
  /** Several statements, no parameters (migrations). */
  exec(sql: string): Promise<void>;
  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T>;
  /**
   * PGlite only: runs `sql` — one or more statements, in one transaction (the simple protocol) —
   * with `data` readable as the file '/dev/blob' (`COPY … FROM '/dev/blob'`). `data` is handed
   * over: the caller must not change it afterwards. `largestValue` is the largest single value in
   * it, in bytes (the worker recycles after large values, pglite-worker.ts).
   */
  copyFrom?(sql: string, data: Uint8Array, largestValue: number): Promise<void>;
  /**
   * LISTEN on a dedicated connection (PostgreSQL only: several instances sharing one event log
   * learn about each other's events this way). Resolves to an unlisten function.
   */
  listen?(channel: string, onMessage: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

const BYTEA_OID = 17;

/** Where PGlite keeps its files inside a data dir. */
export const pgliteDir = (dataDir: string): string => join(dataDir, 'pgdata');

/** False before the very first start in `dataDir` (PGlite then runs initdb, seconds long). */
export function embeddedDatabaseExists(dataDir: string): boolean {
  return existsSync(join(pgliteDir(dataDir), 'PG_VERSION'));
}

/**
 * Postgres settings for the embedded database, added to PGlite's own start parameters.
 * Postgres zeroes its whole buffer pool at start: the default 128 MB of shared_buffers is
 * ~130 MB of resident memory and ~100 ms before the first query, idle or not. The operating
 * system caches the data files anyway (PGlite reads them through Node's fs), so a smaller pool
 * costs little at a million events (docs/benchmarks.md has the numbers).
 *
 * `wal_init_zero=off`: a new 16 MB WAL segment is created without writing 16 MB of zeros first —
 * inside whichever statement needs it, on this one thread, 25–55 ms a read would wait for (the
 * search indexer's direct inserts fill a segment every second or two; DESIGN §17). The embedded
 * database runs with fsync off (the journal is what makes a delivery durable), so the zeros
 * guarded nothing here.
 */
export const PGLITE_SETTINGS: readonly string[] = ['shared_buffers=16MB', 'temp_buffers=2MB', 'wal_init_zero=off'];

/**
 * The embedded database's buffer pool: `small` (16 MB, PGLITE_SETTINGS) always, `large` (128 MB,
 * Postgres's default) while the search index of many events is being built. Every insert into a
 * trigram index of a million events misses a 16 MB pool (the rightmost leaves of thousands of
 * posting trees): direct inserts run at ~450 events/s and a merge of the pending list of even 20
 * events takes ~55 ms, one atomic step a read waits for. With 128 MB a merge of 50 events takes
 * ~15–20 ms and direct inserts ~700 events/s (docs/benchmarks.md, "Reads while the search index
 * is built"). The large pool costs ~110 MB of resident memory (Postgres touches all of it at
 * start), so it is taken only for a large backfill and given back when the index has caught up
 * (search-indexer.ts; the worker client's setBufferPool, pglite-worker.ts).
 */
export type BufferPoolSize = 'small' | 'large';
export const BUFFER_POOL_SETTING: Readonly<Record<BufferPoolSize, string>> = { small: 'shared_buffers=16MB', large: 'shared_buffers=128MB' };

/** PGLITE_SETTINGS with the buffer pool of `size`. */
export function pgliteSettings(size: BufferPoolSize): readonly string[] {
  return PGLITE_SETTINGS.map((setting) => (setting.startsWith('shared_buffers=') ? BUFFER_POOL_SETTING[size] : setting));
}

/**
 * Emscripten's file system chmods every file it creates to the mode asked for (0666 for the
 * files PGlite unpacks after initdb, 0640/0644 for Postgres's own), whatever the process umask:
 * without this, the database's files would be readable by other accounts (src/core/private-files.ts).
 * Runs before Postgres starts, in the thread that owns PGlite; the worker thread gets its source.
 */
export function restrictFileModes(mod: { FS: { chmod: (path: unknown, mode: number, ...rest: unknown[]) => unknown } }): void {
  const chmod = mod.FS.chmod;
  mod.FS.chmod = function (path: unknown, mode: number, ...rest: unknown[]) {
    return chmod.call(this, path, mode & ~0o077, ...rest);
  };
}

/**
 * PGlite returns bytea as hex text, and its own parser builds the bytes one parseInt at a time:
 * ~600 ms and millions of short strings for a 10 MB payload. Node decodes hex natively (~100 ms).
 * Runs in the thread that owns PGlite; the worker thread gets its source.
 */
export function parseBytea(hex: string): Uint8Array {
  const bytes = Buffer.from(hex.slice(2), 'hex');
  // A plain Uint8Array, as PGlite's own parser returns: callers test `instanceof Uint8Array`,
  // which a Buffer fails where the global comes from another realm (the UI tests' jsdom).
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** PGlite's hook into the Emscripten module before it runs (PGlite calls it an extension). */
export const ownerOnlyFiles = {
  name: 'owner-only files',
  setup: async (_pg: unknown, emscriptenOpts: { preRun?: unknown[] }) => ({
    emscriptenOpts: { ...emscriptenOpts, preRun: [...(emscriptenOpts.preRun ?? []), restrictFileModes] },
  }),
};

/** PGlite's default start parameters plus ours (the worker thread builds the same list). */
export function pgliteStartParams(defaults: readonly string[]): string[] {
  return [...defaults, ...PGLITE_SETTINGS.flatMap((setting) => ['-c', setting])];
}

/**
 * PGlite in `dataDir` (or in memory with `memory://`). Binary bytea binding: the default
 * serializer hex-encodes byte by byte in JS (STACK.md measured 1.4–1.9× slower).
 *
 * A lock file guards the directory: two processes opening one PGlite data dir corrupt it, and
 * the second would otherwise fail with an obscure WASM error.
 */
export async function openPglite(dataDir: string | 'memory://'): Promise<SqlClient> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  let releaseLock = async () => {};
  let target: string | undefined;
  if (dataDir !== 'memory://') {
    target = pgliteDir(dataDir);
    await mkdir(target, { recursive: true });
    releaseLock = await acquireDirLock(join(dataDir, 'pgdata.lock'), dataDir);
    await unpackDatabaseTemplate(target);
  }
  let db: import('@electric-sql/pglite').PGlite;
  try {
    db = await PGlite.create(target, {
      serializers: { [BYTEA_OID]: (x: unknown) => x as string },
      parsers: { [BYTEA_OID]: parseBytea },
      startParams: pgliteStartParams(PGlite.defaultStartParams),
      extensions: { ownerOnlyFiles, pg_trgm },
    });
  } catch (error) {
    await releaseLock();
    throw new SwitchboardError('database_unavailable', `the embedded database in ${dataDir} could not be opened: ${(error as Error).message}`, {
      hint: 'if another switchboard was killed while writing, move the data dir aside and start again',
      cause: error,
    });
  }
  const wrap = (q: Pick<typeof db, 'query' | 'exec'>, inTransaction = false): SqlClient => ({
    kind: 'pglite',
    async query<Row>(sql: string, params: readonly unknown[] = [], options: QueryOptions = {}) {
      if (options.settings?.length) {
        if (!inTransaction) return db.transaction((tx) => wrap(tx, true).query<Row>(sql, params, options));
        await q.exec(setLocal(options.settings));
      }
      const result = await q.query<Row>(sql, params as unknown[]);
      return result.rows;
    },
    async exec(sql: string) {
      await q.exec(sql);
    },
    async copyFrom(sql: string, data: Uint8Array) {
      // Node's Blob, not the global one: under jsdom (renderer tests) that one cannot be read back.
      await q.exec(sql, { blob: new Blob([data]) as unknown as globalThis.Blob });
    },
    transaction: (fn) => (inTransaction ? fn(wrap(q, true)) : db.transaction((tx) => fn(wrap(tx, true)))),
    close: async () => {},
  });
  return {
    ...wrap(db),
    async close() {
      try {
        await db.close();
      } finally {
        await releaseLock();
      }
    },
  };
}

/** A real PostgreSQL server (team mode, durable storage). */
export async function openPostgres(url: string): Promise<SqlClient> {
  const pg = (await import('pg')).default;
  const pool = new pg.Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 5_000 });
  // An idle client's connection error must not crash the process; the next query reports it.
  pool.on('error', () => {});
  try {
    const client = await pool.connect();
    client.release();
  } catch (error) {
    await pool.end().catch(() => {});
    throw new SwitchboardError('database_unavailable', `cannot connect to PostgreSQL at ${redactUrl(url)}: ${(error as Error).message}`, {
      hint: 'check that the server is running and database.url (or --database-url) is right',
      cause: error,
    });
  }
  const over = (q: { query: (sql: string, params?: unknown[]) => Promise<{ rows: unknown[] }> }, inTransaction = false): Pick<SqlClient, 'query' | 'exec'> => ({
    async query<Row>(sql: string, params: readonly unknown[] = [], options: QueryOptions = {}): Promise<Row[]> {
      if (options.settings?.length) {
        if (!inTransaction) return client.transaction((tx) => tx.query<Row>(sql, params, options));
        await q.query(setLocal(options.settings));
      }
      const result = await q.query(sql, params as unknown[]);
      return result.rows as Row[];
    },
    async exec(sql: string) {
      await q.query(sql);
    },
  });
  const client: SqlClient = {
    kind: 'postgres',
    ...over(pool),
    async transaction(fn) {
      const conn = await pool.connect();
      try {
        await conn.query('BEGIN');
        const tx: SqlClient = {
          kind: 'postgres',
          ...over(conn, true),
          transaction: (inner) => inner(tx),
          close: async () => {},
        };
        const result = await fn(tx);
        await conn.query('COMMIT');
        return result;
      } catch (error) {
        await conn.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        conn.release();
      }
    },
    async listen(channel, onMessage) {
      // A pooled connection would lose the LISTEN when returned; this one is ours until unlisten.
      const listener = new pg.Client({ connectionString: url });
      listener.on('error', () => {});
      await listener.connect();
      listener.on('notification', (message) => {
        if (message.channel === channel && message.payload !== undefined) onMessage(message.payload);
      });
      await listener.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      return async () => {
        await listener.end().catch(() => {});
      };
    },
    close: () => pool.end(),
  };
  return client;
}

/** SET LOCAL statements for QueryOptions.settings (planner settings the store itself writes). */
const setLocal = (settings: readonly string[]) => settings.map((setting) => `SET LOCAL ${setting};`).join(' ');

/** `postgres://user:pass@host/db` → `postgres://user:***@host/db`: a URL may carry a password. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

export async function acquireDirLock(lockPath: string, dataDir: string): Promise<() => Promise<void>> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(lockPath, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      return async () => {
        await rm(lockPath, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number((await readFile(lockPath, 'utf8').catch(() => '')).trim());
      if (holder && holder !== process.pid && isAlive(holder)) {
        throw new SwitchboardError('database_unavailable', `the data dir ${dataDir} is in use by another switchboard (pid ${holder})`, {
          hint: 'stop the other instance, or start this one with --data-dir pointing elsewhere',
        });
      }
      // A lock left by a process that died (SIGKILL, crash) is stale: take it over.
      await rm(lockPath, { force: true });
    }
  }
  throw new SwitchboardError('database_unavailable', `could not lock the data dir ${dataDir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
