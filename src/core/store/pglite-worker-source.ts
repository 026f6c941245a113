import { parseBytea, restrictFileModes } from './sql-client.js';

/**
 * The code of the database's worker thread (pglite-worker.ts runs it, `eval`ed): PGlite opened
 * on the data dir, statements run in the order they came, a transaction's statements never
 * interleaved with another's, large values sent back by transfer.
 *
 * A string, so the same code runs from src/ (vitest), dist/ (CLI) and the Electron main bundle
 * without a separate worker entry to build.
 */

export const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require(workerData.pglitePath);
const { pg_trgm } = require(workerData.pgTrgmPath);
const restrictFileModes = ${restrictFileModes.toString()};
const ownerOnlyFiles = {
  name: 'owner-only files',
  setup: async (_pg, emscriptenOpts) => ({ emscriptenOpts: { ...emscriptenOpts, preRun: [...(emscriptenOpts.preRun || []), restrictFileModes] } }),
};
const parseBytea = ${parseBytea.toString()};
// A worker that replaced a crashed one knows nothing of its transaction: never run the rest alone.
const LOST_TX = 'the transaction was lost: the database worker restarted';
let db;
let openTx = null;          // { id, tx, done }
// The transaction that owns the database, from the moment its begin ARRIVED until its commit or
// rollback was handled. Taken on arrival, not when the begin runs: two begins sent together must
// not both be queued, or the second waits for PGlite's transaction lock while the first one's
// statements wait behind it — for good (issue #22).
let reserved = null;
const waiting = [];         // messages of anything else, held back in order while it is reserved

const transferable = ${transferable.toString()};
// The largest single value (bytes or characters) a statement sent or received.
const sizeOf = (value) => (value && typeof value === 'object' && typeof value.byteLength === 'number') ? value.byteLength : typeof value === 'string' ? value.length : 0;
function largestValue(params, rows) {
  let largest = 0;
  for (const value of params || []) largest = Math.max(largest, sizeOf(value));
  for (const row of rows || []) for (const key in row) largest = Math.max(largest, sizeOf(row[key]));
  return largest;
}
function reply(message, rows) {
  const transfer = [];
  for (const row of rows || []) for (const key in row) { const buffer = transferable(row[key]); if (buffer && !transfer.includes(buffer)) transfer.push(buffer); }
  parentPort.postMessage(message, transfer);
}

async function handle(message) {
  const { id, op, sql, params, tx } = message;
  try {
    let rows;
    if (op === 'open') {
      db = await PGlite.create(workerData.dataDir, {
        serializers: { 17: (x) => x },
        parsers: { 17: parseBytea },
        startParams: [...PGlite.defaultStartParams, ...workerData.settings.flatMap((setting) => ['-c', setting])],
        extensions: { ownerOnlyFiles, pg_trgm },
      });
    } else if (op === 'begin') {
      await new Promise((started) => {
        db.transaction((handle) => new Promise((done) => { openTx = { id: tx, tx: handle, done }; started(); })).catch(() => {});
      });
    } else if (op === 'commit' || op === 'rollback') {
      if (!openTx || openTx.id !== tx) throw new Error(LOST_TX);
      const current = openTx;
      if (op === 'rollback') await current.tx.rollback().catch(() => {});
      openTx = null;
      current.done();
      // PGlite commits when the transaction callback resolves; wait for it before answering.
      await db.query('SELECT 1');
    } else if (op === 'close') {
      await db.close();
    } else {
      if (tx !== undefined && !(openTx && tx === openTx.id)) throw new Error(LOST_TX);
      const target = openTx ? openTx.tx : db;
      if (op === 'exec') await target.exec(sql);
      else if (op === 'copy') await target.exec(sql, { blob: new Blob([message.blob]) });
      else if (message.settings && message.settings.length) {
        // Planner settings for one statement: outside a transaction, one of its own, begun and
        // ended in this one message, so a read never holds the database across messages.
        const run = async (t) => {
          await t.exec(message.settings.map((setting) => 'SET LOCAL ' + setting + ';').join(' '));
          return (await t.query(sql, params)).rows;
        };
        rows = openTx ? await run(openTx.tx) : await db.transaction(run);
      } else rows = (await target.query(sql, params)).rows;
    }
    reply({ id, ok: true, rows, largest: op === 'copy' ? message.largest : largestValue(params, rows) }, rows);
  } catch (error) {
    parentPort.postMessage({ id, ok: false, message: String(error && error.message || error), code: error && error.code, largest: op === 'copy' ? message.largest : largestValue(params) });
  }
}

let busy = Promise.resolve();
function admit(message) {
  if (reserved !== null && message.tx !== reserved) { waiting.push(message); return; }
  if (message.op === 'begin') reserved = message.tx;
  busy = busy.then(() => handle(message)).then(() => {
    if (reserved === null || message.tx !== reserved) return;
    // Ended, or its begin failed (the caller then sends no rollback): the database is free again.
    const ended = message.op === 'commit' || message.op === 'rollback' || !(openTx && openTx.id === reserved);
    if (!ended) return;
    reserved = null;
    while (reserved === null && waiting.length) admit(waiting.shift());
  });
}
parentPort.on('message', admit);
`;

/**
 * Large byte values cross between the threads by transfer, not by copy: a structured clone of
 * a 10 MB payload is one more 10 MB allocation on each side (and the serializer's growing
 * buffer), which glibc then keeps. Only a buffer the value owns whole can move; small ones
 * (Node's pooled buffers among them) are copied.
 */
export function transferable(value: unknown): ArrayBuffer | undefined {
  if (!(value instanceof Uint8Array) || value.byteLength < 65536) return undefined;
  const buffer = value.buffer;
  return buffer instanceof ArrayBuffer && value.byteOffset === 0 && value.byteLength === buffer.byteLength ? buffer : undefined;
}

