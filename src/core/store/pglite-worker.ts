import { createRequire } from 'node:module';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { SwitchboardError } from '../errors.js';
import { unpackDatabaseTemplate } from './database-template.js';
import { WORKER_SOURCE, transferable } from './pglite-worker-source.js';
import { acquireDirLock, pgliteDir, pgliteSettings, type BufferPoolSize, type QueryOptions, type SqlClient } from './sql-client.js';

/**
 * PGlite in a worker thread. A PGlite query runs synchronously in WASM on whatever thread owns
 * it; on Electron's main thread that stalls the window for 50–100 ms under load (STACK.md),
 * in a worker the main loop's worst stall drops to ~10–16 ms at the same throughput.
 *
 * The worker's code is pglite-worker-source.ts (a string, run with `eval`). PGlite itself is
 * loaded by path from node_modules (it stays external to the bundle, which it must: its .wasm and
 * .data files are found next to it).
 *
 * Recycling. A WebAssembly heap never shrinks, and the pages Postgres touched in it stay
 * resident: one 10 MB payload in or out (the bound parameter, Postgres's copies of it, TOAST,
 * the result) leaves ~50 MB of the heap resident, and the worker's copies leave its malloc
 * arena and JS heap grown — ~200 MB in all that the process would keep for good
 * (docs/benchmarks.md, "Memory"). After a statement that carried one large value the client
 * therefore replaces its worker once no such statement came for a moment: PGlite closed
 * cleanly, the thread ended (its memory goes back to the system), a fresh one opened on the
 * same data dir (~0.4 s on a quiet machine). Statements sent meanwhile wait and run on the new
 * worker; a transaction is never split (the recycle waits for it to end). Many small rows in
 * one statement (a group commit) do not count: a heap that every batch grows back to is not
 * worth returning.
 */

/** A statement that sent or received one value at least this large schedules a recycle. */
const RECYCLE_AFTER_VALUE_BYTES = 4 * 1024 * 1024;
/** The recycle waits until no such statement came for this long… */
const RECYCLE_QUIET_MS = 2_000;
/** …but no longer than this after the first one (a steady stream of large payloads). */
const RECYCLE_MAX_DELAY_MS = 10_000;

export interface WorkerDatabaseOptions {
  recycleAfterValueBytes?: number;
  recycleQuietMs?: number;
  recycleMaxDelayMs?: number;
  /**
   * Told after each recycle how long the database was unavailable, and why: a large value's
   * memory given back, the buffer pool changed (setBufferPool), or asked for (recycle()).
   */
  onRecycle?: (info: { ms: number; reason: RecycleReason }) => void;
  /**
   * Told when a worker that had opened the database ended without being asked to (it crashed:
   * an uncaught error in it, its memory exhausted, `process.exit` in WASM). The statements in
   * flight failed with `error`; the next statement starts a new worker.
   */
  onCrash?: (error: Error) => void;
}

export type RecycleReason = 'large value' | 'buffer pool' | 'asked';

/** The embedded database in a worker thread, with its recycling visible (tests, benchmarks). */
export interface WorkerSqlClient extends SqlClient {
  /** Workers replaced so far. */
  readonly recycles: number;
  /** Replaces the worker now (after the statements in flight and open transactions). */
  recycle(): Promise<void>;
  /** The buffer pool the database runs with now (sql-client.ts BufferPoolSize). */
  readonly bufferPool: BufferPoolSize;
  /**
   * Reopens the database with a buffer pool of `size` (a recycle: statements sent meanwhile wait,
   * ~0.3–0.8 s); nothing if it already has it. Later recycles keep it.
   */
  setBufferPool(size: BufferPoolSize): Promise<void>;
}

interface Message {
  sql?: string;
  params?: readonly unknown[];
  /** Planner settings for this one statement (SqlClient.query's options). */
  settings?: readonly string[];
  tx?: number;
  /** copyFrom's data, and the largest value in it. */
  blob?: Uint8Array;
  largest?: number;
}

interface Reply {
  id: number;
  ok: boolean;
  rows?: unknown[];
  message?: string;
  /** The SQLSTATE of a failed statement: the journal tells a bad row from a failing database by it. */
  code?: string;
  largest: number;
}

interface Connection {
  /** The thread has ended (closed, or crashed): the next statement opens a new one. */
  readonly ended: boolean;
  send(op: string, message?: Message): Promise<Reply>;
  /** Closes PGlite cleanly and ends the thread (also when PGlite's close fails). */
  close(): Promise<void>;
}

interface WorkerData {
  dataDir: string;
  pglitePath: string;
  pgTrgmPath: string;
  /** Postgres settings; set again when the buffer pool changes (the next worker opens with them). */
  settings: readonly string[];
}

/** Starts a worker and opens PGlite in it; rejects (thread ended) if the database cannot open. */
async function startWorker(workerData: WorkerData, onCrash?: (error: Error) => void): Promise<Connection> {
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData });
  worker.unref();
  let nextId = 1;
  let ended: Error | undefined;
  // Set once the database is open, and cleared when we close it: an end in between is a crash.
  let running = false;
  const pending = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  const fail = (error: Error) => {
    ended ??= error;
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  };
  worker.on('message', (reply: Reply) => {
    const waiter = pending.get(reply.id);
    pending.delete(reply.id);
    waiter?.resolve(reply);
  });
  worker.on('error', (error) => fail(new Error(`the database worker crashed: ${error.message}`, { cause: error })));
  worker.on('exit', (code) => {
    fail(new Error(`the database worker ended (exit code ${code})`));
    if (running) onCrash?.(ended!);
    running = false;
  });
  const send = (op: string, message: Message = {}) =>
    new Promise<Reply>((resolve, reject) => {
      if (ended) return reject(ended);
      const id = nextId++;
      pending.set(id, { resolve, reject });
      // The caller keeps its buffers: large ones are copied here once and the copy moves.
      const params = message.params?.map((value) => (value instanceof Uint8Array && value.byteLength >= 65536 ? new Uint8Array(value) : value));
      // A COPY's data is handed over (copyFrom): it moves without a copy when it can.
      const transfer = [...(params ?? []), message.blob].map(transferable).filter((buffer) => buffer !== undefined);
      worker.postMessage({ id, op, ...message, params }, transfer);
    });
  const opened = await send('open').catch((error: Error) => ({ id: 0, ok: false, message: error.message, largest: 0 }));
  if (!opened.ok) {
    await worker.terminate();
    throw new Error(opened.message);
  }
  running = true;
  return {
    get ended() {
      return ended !== undefined;
    },
    send,
    async close() {
      running = false;
      try {
        await send('close');
      } finally {
        await worker.terminate();
      }
    },
  };
}

export async function openPgliteInWorker(dataDir: string, options: WorkerDatabaseOptions = {}): Promise<WorkerSqlClient> {
  const target = pgliteDir(dataDir);
  await mkdir(target, { recursive: true });
  const releaseLock = await acquireDirLock(join(dataDir, 'pgdata.lock'), dataDir);
  await unpackDatabaseTemplate(target);
  const require = createRequire(import.meta.url);
  const workerData: WorkerData = {
    dataDir: target,
    pglitePath: require.resolve('@electric-sql/pglite'),
    pgTrgmPath: require.resolve('@electric-sql/pglite/contrib/pg_trgm'),
    settings: pgliteSettings('small'),
  };
  const unavailable = (error: unknown) =>
    new SwitchboardError('database_unavailable', `the embedded database in ${dataDir} could not be opened: ${(error as Error).message}`, { cause: error });
  let bufferPool: BufferPoolSize = 'small';
  /** The pool of the worker opened last (a recycle already past its open keeps the old one). */
  let openedPool: BufferPoolSize = bufferPool;
  const open = () => {
    openedPool = bufferPool;
    return startWorker(workerData, options.onCrash).catch((error) => Promise.reject(unavailable(error)));
  };

  let connection: Promise<Connection>;
  try {
    connection = Promise.resolve(await open());
  } catch (error) {
    await releaseLock();
    throw error;
  }

  const largeValueBytes = options.recycleAfterValueBytes ?? RECYCLE_AFTER_VALUE_BYTES;
  const quietMs = options.recycleQuietMs ?? RECYCLE_QUIET_MS;
  const maxDelayMs = options.recycleMaxDelayMs ?? RECYCLE_MAX_DELAY_MS;
  let nextTx = 1;
  let recycles = 0;
  let closed = false;
  /** Statements sent and not answered, and transactions begun and not ended: a recycle waits for both. */
  let active = 0;
  let openTransactions = 0;
  let drained: (() => void) | undefined;
  /** Set while a recycle is waiting or running: new statements (outside an open transaction) wait for it. */
  let gate: Promise<void> | undefined;
  let recycleTimer: NodeJS.Timeout | undefined;
  let dueSince: number | undefined;

  const settle = () => {
    if (active === 0 && openTransactions === 0) drained?.();
  };
  /**
   * Waits while a recycle is pending, then counts the caller in, in the same turn: a recycle
   * that starts later waits for it.
   */
  const enter = async (what: 'statement' | 'transaction') => {
    while (gate) await gate;
    if (closed) throw new SwitchboardError('storage_unavailable', 'the database is closed');
    if (what === 'statement') active++;
    else openTransactions++;
  };

  /** The current worker; one that failed to open (or died) is replaced on the next statement. */
  const current = (): Promise<Connection> => {
    connection = connection.then((live) => (live.ended ? open() : live), () => open());
    return connection;
  };

  const scheduleRecycle = () => {
    const now = Date.now();
    dueSince ??= now;
    clearTimeout(recycleTimer);
    recycleTimer = setTimeout(() => {
      dueSince = undefined;
      // A failed reopen is reported to the statements that wait for it.
      recycle('large value').catch(() => {});
    }, Math.max(0, Math.min(now + quietMs, dueSince + maxDelayMs) - now));
    recycleTimer.unref();
  };

  // Callers outside a transaction pass the gate first; statements inside one never wait for it.
  const send = async (op: string, message: Message = {}): Promise<unknown[]> => {
    if (message.tx === undefined) await enter('statement');
    else active++;
    try {
      const reply = await (await current()).send(op, message);
      if (reply.largest >= largeValueBytes) scheduleRecycle();
      if (!reply.ok) throw Object.assign(new Error(reply.message), reply.code ? { code: reply.code } : {});
      return reply.rows ?? [];
    } finally {
      active--;
      settle();
    }
  };

  const recycle = (reason: RecycleReason): Promise<void> => {
    if (closed) return Promise.resolve();
    gate ??= (async () => {
      while (active > 0 || openTransactions > 0) await new Promise<void>((resolve) => (drained = resolve));
      drained = undefined;
      if (closed) return;
      const started = performance.now();
      const old = await connection.catch(() => undefined);
      await old?.close().catch(() => {});
      connection = open();
      // If the new worker failed to open, the statements waiting at the gate try again (current()).
      connection.catch(() => {});
      await connection.catch(() => {});
      recycles++;
      options.onRecycle?.({ ms: performance.now() - started, reason });
    })().finally(() => {
      gate = undefined;
    });
    return gate;
  };

  const over = (tx?: number): Pick<SqlClient, 'query' | 'exec' | 'copyFrom'> => ({
    query: async <Row>(sql: string, params: readonly unknown[] = [], options: QueryOptions = {}) =>
      (await send('query', { sql, params, tx, ...(options.settings?.length ? { settings: options.settings } : {}) })) as Row[],
    exec: async (sql: string) => {
      await send('exec', { sql, tx });
    },
    copyFrom: async (sql: string, data: Uint8Array, largestValue: number) => {
      await send('copy', { sql, tx, blob: data, largest: largestValue });
    },
  });

  return {
    kind: 'pglite',
    ...over(),
    get recycles() {
      return recycles;
    },
    recycle: () => recycle('asked'),
    get bufferPool() {
      return bufferPool;
    },
    async setBufferPool(size) {
      bufferPool = size;
      workerData.settings = pgliteSettings(size);
      while (openedPool !== size && !closed) await recycle('buffer pool');
    },
    async transaction(fn) {
      await enter('transaction');
      try {
        const tx = nextTx++;
        await send('begin', { tx });
        const client: SqlClient = { kind: 'pglite', ...over(tx), transaction: (inner) => inner(client), close: async () => {} };
        try {
          const result = await fn(client);
          await send('commit', { tx });
          return result;
        } catch (error) {
          await send('rollback', { tx });
          throw error;
        }
      } finally {
        openTransactions--;
        settle();
      }
    },
    async close() {
      clearTimeout(recycleTimer);
      while (gate) await gate;
      closed = true;
      try {
        const last = await connection.catch(() => undefined);
        await last?.close();
      } finally {
        await releaseLock();
      }
    },
  };
}
