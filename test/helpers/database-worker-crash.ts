import { runInThisContext } from 'node:vm';

/**
 * Crashes the embedded database's real worker thread (src/core/store/pglite-worker.ts) from
 * outside, with no hook in the product: Node's inspector attaches to the process's running
 * worker threads (the NodeWorker domain) and has each database worker throw an uncaught error,
 * as a crash inside PGlite would. Database workers are told apart by `workerData.pglitePath`.
 * Resolves with how many were told to crash; each ends a moment later (CRASH_DELAY_MS).
 *
 * The code is a source string because it also runs inside Electron's main process
 * (test/desktop: `electronApp.evaluate`), where nothing of the test's module scope exists.
 *
 * Only workers running now: crashing each new worker as it starts (waitForDebuggerOnStart, or
 * catching its announcement) segfaulted Node 20 here, or let some workers through. To keep a new
 * worker from opening the database, damage its files instead (test/main/shell-database-crash).
 */
export const CRASH_MESSAGE = 'crashed on purpose by the test';
/**
 * The worker throws this long after it answered, once the inspector has let go of it: a worker
 * that ended while the session was being closed took the whole test process down (a segfault)
 * now and then here.
 */
const CRASH_DELAY_MS = 250;

export const CRASH_DATABASE_WORKERS_SOURCE = `async () => {
  const inspector = process.getBuiltinModule('node:inspector');
  const session = new inspector.Session();
  session.connect();
  const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  const CRASH = "(() => { const { workerData } = process.getBuiltinModule('node:worker_threads'); if (!workerData || !workerData.pglitePath) return false; setTimeout(() => { throw new Error('${CRASH_MESSAGE}'); }, ${CRASH_DELAY_MS}); return true; })()";
  let nextId = 1;
  const replies = new Map();
  session.on('NodeWorker.receivedMessageFromWorker', ({ params }) => {
    const reply = JSON.parse(params.message);
    replies.get(params.sessionId + ':' + reply.id)?.(reply);
  });
  const crashed = [];
  // The running workers are announced before enable answers.
  session.on('NodeWorker.attachedToWorker', ({ params }) => {
    const id = nextId++;
    const answered = new Promise((resolve) => replies.set(params.sessionId + ':' + id, resolve));
    const message = JSON.stringify({ id, method: 'Runtime.evaluate', params: { expression: CRASH, returnByValue: true } });
    crashed.push(post('NodeWorker.sendMessageToWorker', { sessionId: params.sessionId, message }).then(() => answered));
  });
  try {
    await post('NodeWorker.enable', { waitForDebuggerOnStart: false });
    const results = await Promise.all(crashed);
    return results.filter((reply) => reply.result && reply.result.result && reply.result.result.value === true).length;
  } finally {
    session.disconnect();
  }
}`;

/** In this process (the fake-electron shell tests and the core's tests run the real worker here). */
export function crashDatabaseWorkers(): Promise<number> {
  const crash = runInThisContext(`(${CRASH_DATABASE_WORKERS_SOURCE})`) as () => Promise<number>;
  return crash();
}

/** Keeps a new database worker from opening the data dir (Postgres refuses a PG_VERSION it does not know); undo it with the returned function. */
export async function damageDatabaseFiles(dataDir: string): Promise<() => Promise<void>> {
  const { readFile, writeFile } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const file = join(dataDir, 'pgdata', 'PG_VERSION');
  const original = await readFile(file);
  await writeFile(file, 'not a version\n');
  return () => writeFile(file, original);
}
