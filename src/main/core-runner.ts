import type { Logger } from '../core/logger.js';
import type { Switchboard } from '../core/switchboard.js';
import type { SwitchboardApi } from '../shared/api.js';
import { describeDatabaseLoss } from './error-screen.js';
import type { CoreStart } from './lifecycle.js';
import type { StartupScreen } from './startup-screen.js';

/**
 * The core's runs inside the shell, one at a time: the first start, a failed start tried again
 * from the start-up screen, and a running core whose database was lost — its worker thread
 * crashed and a new one would not start — which the window shows as a failure (never a UI whose
 * every call fails) and Try again replaces with a new core.
 *
 * A worker that crashes once is not a failure: the core starts a new one on the next statement
 * (pglite-worker.ts). The runner asks the database for something straight after a crash, which
 * starts that new worker at once, and only shows the failure when it does not answer.
 */

/** How long the database may take to answer through a new worker (crash recovery included). */
const RESTART_PROBE_MS = 30_000;

export interface CoreRunnerDeps {
  /** Starts a core with the shell's options (lifecycle.ts startCore); `onCrash` goes to the core. */
  start: (onDatabaseWorkerCrash: (error: Error) => void) => Promise<CoreStart>;
  screen: StartupScreen;
  /** Wires what lives with a running core (tray, live messages); returns what undoes it. */
  attach: (sb: Switchboard) => () => void;
  /** The core is up: the window switches to the UI. */
  showUi: () => void;
  /** The screen shows a failure: the window shows it now, opening one if it was closed. */
  showFailure: () => void;
  logPath: string;
  logger: Logger;
}

export interface CoreRunner {
  /** Starts a core (stopping one whose database was lost first). Serialized; never rejects. */
  boot(): Promise<void>;
  /** For the quit: waits for a start in progress, then stops the core. No start after it. */
  stop(): Promise<void>;
  /** The API of the core that is up, or of the next one to come up (IPC calls wait for it). */
  api(): Promise<SwitchboardApi>;
}

interface Running {
  sb: Switchboard;
  detach: () => void;
}

export function createCoreRunner({ start, screen, attach, showUi, showFailure, logPath, logger }: CoreRunnerDeps): CoreRunner {
  let running: Running | undefined;
  let stopping = false;
  let booting: Promise<void> = Promise.resolve();
  let coreUp!: (api: SwitchboardApi) => void;
  let api = new Promise<SwitchboardApi>((resolve) => (coreUp = resolve));

  const stopRunning = async () => {
    const current = running;
    running = undefined;
    if (!current) return;
    current.detach();
    await current.sb.stop();
  };

  const databaseCrashed = async (crashed: Running, error: Error) => {
    try {
      await withTimeout(crashed.sb.store.estimatedEventCount(), RESTART_PROBE_MS);
      logger.info('database: a new worker took over after the crash');
    } catch (restart) {
      // Quitting, or already replaced: nothing to show.
      if (stopping || running !== crashed) return;
      const failure = describeDatabaseLoss(error, restart, logPath);
      logger.error(`${failure.message} — the window shows it`);
      screen.failed(failure);
      showFailure();
    }
  };

  const bootOnce = async () => {
    if (stopping) return;
    if (running) {
      // Try again after the database was lost: the old core still holds the ports and the data dir.
      await stopRunning();
      api = new Promise<SwitchboardApi>((resolve) => (coreUp = resolve));
      if (stopping) return;
    }
    screen.starting();
    // A crash counts only once this start is the running core (one during its start fails the start).
    const thisRun: { core?: Running } = {};
    const started = await start((error) => {
      if (thisRun.core && running === thisRun.core) void databaseCrashed(thisRun.core, error);
    });
    if (!started.ok) {
      screen.failed(started.failure);
      showFailure();
      return;
    }
    thisRun.core = { sb: started.sb, detach: attach(started.sb) };
    running = thisRun.core;
    screen.ready();
    coreUp(started.sb.api);
    showUi();
  };

  return {
    boot() {
      booting = booting.then(bootOnce).catch((error: Error) => logger.error(error.stack ?? error.message));
      return booting;
    },
    async stop() {
      stopping = true;
      await booting;
      await stopRunning();
    },
    api: () => api,
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the database did not answer within ${ms / 1000} s`)), ms);
    }),
  ]);
}
