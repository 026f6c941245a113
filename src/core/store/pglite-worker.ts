import { createRequire } from 'node:module';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { SwitchboardError } from '../errors.js';
import { unpackDatabaseTemplate } from './database-template.js';
import { acquireDirLock, PGLITE_SETTINGS, pgliteDir, restrictFileModes, type SqlClient } from './sql-client.js';

/**
 * PGlite in a worker thread. A PGlite query runs synchronously in WASM on whatever thread owns
 * it; on Electron's main thread that stalls the window for 50–100 ms under load (STACK.md),
 * in a worker the main loop's worst stall drops to ~10–16 ms at the same throughput.
 *
 * The worker's source is a string so the same code runs from src/ (vitest), dist/ (CLI) and the
 * Electron main bundle without a separate worker entry to build; PGlite itself is loaded by
 * path from node_modules (it stays external to the bundle, which it must: its .wasm and .data
 * files are found next to it).
 */

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require(workerData.pglitePath);
const { pg_trgm } = require(workerData.pgTrgmPath);
const restrictFileModes = ${restrictFileModes.toString()};
const ownerOnlyFiles = {
  name: 'owner-only files',
  setup: async (_pg, emscriptenOpts) => ({ emscriptenOpts: { ...emscriptenOpts, preRun: [...(emscriptenOpts.preRun || []), restrictFileModes] } }),
};
let db;
let openTx = null;          // { id, tx, done }
const waiting = [];         // messages held back while another transaction is open

async function handle(message) {
  const { id, op, sql, params, tx } = message;
  try {
    let rows;
    if (op === 'open') {
      db = await PGlite.create(workerData.dataDir, {
        serializers: { 17: (x) => x },
        startParams: [...PGlite.defaultStartParams, ...workerData.settings.flatMap((setting) => ['-c', setting])],
        extensions: { ownerOnlyFiles, pg_trgm },
      });
    } else if (op === 'begin') {
      await new Promise((started) => {
        db.transaction((handle) => new Promise((done) => { openTx = { id: tx, tx: handle, done }; started(); })).catch(() => {});
      });
    } else if (op === 'commit' || op === 'rollback') {
      const current = openTx;
      if (op === 'rollback') await current.tx.rollback().catch(() => {});
      openTx = null;
      current.done();
      // PGlite commits when the transaction callback resolves; wait for it before answering.
      await db.query('SELECT 1');
    } else {
      const target = openTx && tx === openTx.id ? openTx.tx : db;
      if (op === 'exec') await target.exec(sql);
      else rows = (await target.query(sql, params)).rows;
    }
    if (op === 'close') await db.close();
    parentPort.postMessage({ id, ok: true, rows });
  } catch (error) {
    parentPort.postMessage({ id, ok: false, message: String(error && error.message || error) });
  }
}

let busy = Promise.resolve();
parentPort.on('message', (message) => {
  // Statements of an open transaction run at once; everything else waits for it to finish.
  if (openTx && message.tx !== openTx.id) { waiting.push(message); return; }
  busy = busy.then(() => handle(message)).then(() => {
    while (!openTx && waiting.length) { const next = waiting.shift(); busy = busy.then(() => handle(next)); }
  });
});
`;

interface Reply {
  id: number;
  ok: boolean;
  rows?: unknown[];
  message?: string;
}

export async function openPgliteInWorker(dataDir: string): Promise<SqlClient> {
  const target = pgliteDir(dataDir);
  await mkdir(target, { recursive: true });
  const releaseLock = await acquireDirLock(join(dataDir, 'pgdata.lock'), dataDir);
  await unpackDatabaseTemplate(target);
  const require = createRequire(import.meta.url);
  const pglitePath = require.resolve('@electric-sql/pglite');
  const pgTrgmPath = require.resolve('@electric-sql/pglite/contrib/pg_trgm');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { dataDir: target, pglitePath, pgTrgmPath, settings: PGLITE_SETTINGS } });
  worker.unref();
  let nextId = 1;
  let nextTx = 1;
  const pending = new Map<number, { resolve: (rows: unknown[]) => void; reject: (error: Error) => void }>();
  worker.on('message', (reply: Reply) => {
    const waiter = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.ok) waiter?.resolve(reply.rows ?? []);
    else waiter?.reject(new Error(reply.message));
  });
  worker.on('error', (error) => {
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  });

  const send = (op: string, extra: { sql?: string; params?: readonly unknown[]; tx?: number } = {}) =>
    new Promise<unknown[]>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, op, ...extra });
    });

  try {
    await send('open');
  } catch (error) {
    await worker.terminate();
    await releaseLock();
    throw new SwitchboardError('database_unavailable', `the embedded database in ${dataDir} could not be opened: ${(error as Error).message}`, { cause: error });
  }

  const over = (tx?: number): Pick<SqlClient, 'query' | 'exec'> => ({
    query: async <Row>(sql: string, params: readonly unknown[] = []) => (await send('query', { sql, params, tx })) as Row[],
    exec: async (sql: string) => {
      await send('exec', { sql, tx });
    },
  });

  return {
    kind: 'pglite',
    ...over(),
    async transaction(fn) {
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
    },
    async close() {
      try {
        await send('close');
      } finally {
        await worker.terminate();
        await releaseLock();
      }
    },
  };
}
