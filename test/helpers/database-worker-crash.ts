import { runInThisContext } from 'node:vm';

/**
 * Crashes the embedded database's real worker thread (src/core/store/pglite-worker.ts) from
 * outside, with no hook in the product: Node's inspector attaches to the process's worker
 * threads (the NodeWorker domain) and has each database worker throw an uncaught error, as a
 * crash in PGlite would. Workers are told apart by their `workerData.pglitePath`.
 *
 * - `now`: the database workers running now crash (resolves with how many).
 * - `every-start`: from now on each new database worker crashes while it opens the database,
 *   until `off`.
 * - `off`: stops crashing new ones.
 *
 * The code is a source string because it also runs inside Electron's main process
 * (test/desktop: `electronApp.evaluate`), where nothing of the test's module scope exists.
 */
export type CrashMode = 'now' | 'every-start' | 'off';

export const CRASH_MESSAGE = 'crashed on purpose by the test';

export const CRASH_DATABASE_WORKERS_SOURCE = `async (mode) => {
  const inspector = process.getBuiltinModule('node:inspector');
  // The session that crashes new workers lives until 'off'; 'now' uses one of its own.
  const state = (globalThis.__switchboardWorkerCrash ??= { session: null });
  if (mode !== 'now' && state.session) {
    state.session.disconnect();
    state.session = null;
  }
  if (mode === 'off') return 0;
  const session = new inspector.Session();
  session.connect();
  const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  // A worker just starting may not have its workerData yet: the check runs once its script has.
  const CRASH = "(() => { const data = () => process.getBuiltinModule('node:worker_threads').workerData; const ours = (d) => !!(d && d.pglitePath); if (data() !== null && !ours(data())) return false; setImmediate(() => { if (ours(data())) throw new Error('${CRASH_MESSAGE}'); }); return true; })()";
  let nextId = 1;
  const replies = new Map();
  session.on('NodeWorker.receivedMessageFromWorker', ({ params }) => {
    const reply = JSON.parse(params.message);
    replies.get(params.sessionId + ':' + reply.id)?.(reply);
  });
  const ask = (sessionId, method, params) => {
    const id = nextId++;
    const answered = new Promise((resolve) => replies.set(sessionId + ':' + id, resolve));
    return post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method, params }) }).then(() => answered);
  };
  const crashed = [];
  // Workers running now are announced before enable answers; workers started later after it.
  let enabled = false;
  session.on('NodeWorker.attachedToWorker', ({ params }) => {
    // A new worker is announced as its script starts: PGlite takes far longer to open than the
    // crash takes to come, so it crashes while the database opens.
    if (mode === 'now' ? !enabled : enabled) crashed.push(ask(params.sessionId, 'Runtime.evaluate', { expression: CRASH, returnByValue: true }));
  });
  // Not waitForDebuggerOnStart: with it, Node 20 segfaulted here when the database worker was
  // replaced (the whole process, not the worker).
  await post('NodeWorker.enable', { waitForDebuggerOnStart: false });
  enabled = true;
  if (mode === 'every-start') {
    state.session = session;
    return 0;
  }
  const results = await Promise.all(crashed);
  session.disconnect();
  return results.filter((reply) => reply.result && reply.result.result && reply.result.result.value === true).length;
}`;

/** In this process (the fake-electron shell tests and core tests run the real worker here). */
export function crashDatabaseWorkers(mode: CrashMode): Promise<number> {
  const crash = runInThisContext(`(${CRASH_DATABASE_WORKERS_SOURCE})`) as (mode: CrashMode) => Promise<number>;
  return crash(mode);
}
