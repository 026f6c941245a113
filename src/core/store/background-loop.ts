import type { Logger } from '../logger.js';

/**
 * The loop of a background job that follows the event log (the search indexer, the shape
 * tracker; DESIGN §17): ingest comes first — while deliveries keep arriving (one in the last
 * QUIET_MS) or the journal has events waiting to be applied, it waits, unless it has fallen
 * `maxBehind` events behind: then it takes one step per BUSY_WAIT_MS (urgent for the search
 * indexer: a long unindexed tail costs searches more than a slice costs ingest). Idle, it sleeps until
 * woken (an applied batch) or `pollMs`. A failing step is reported once, then retried with a
 * growing pause; the job's own slices keep to the background lane (foreground.ts).
 */

const QUIET_MS = 250;
const BUSY_WAIT_MS = 100;

export interface BackgroundLoopOptions {
  logger: Logger;
  /** Events stored or acknowledged but not yet in the database (the journal's lag); 0 if none. */
  ingestBacklog?: () => number;
  /** When the last delivery came, stored or a redelivery (performance.now() ms), if known. */
  lastIngestAt?: () => number;
  /** How many events the job has still to reach. */
  behind: () => number;
  maxBehind: number;
  pollMs: number;
  /**
   * One step of the job; `done` once nothing is left until woken; `idleMs`: nothing to do for
   * now (another job goes first), look again after that long or when woken.
   */
  step: (urgent: boolean) => Promise<{ done: boolean; idleMs?: number }>;
  /** The first failure of a run of them, in one log line. */
  failed: (error: Error) => string;
}

export class BackgroundLoop {
  private stopped = false;
  private wakeUp: (() => void) | null = null;
  private running: Promise<void> | null = null;
  private failures = 0;

  constructor(private readonly options: BackgroundLoopOptions) {}

  start(): void {
    this.running ??= this.run();
  }

  wake(): void {
    const wake = this.wakeUp;
    this.wakeUp = null;
    wake?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.running;
  }

  private async run(): Promise<void> {
    const { options } = this;
    while (!this.stopped) {
      const behind = options.behind();
      const ingesting = (options.ingestBacklog?.() ?? 0) > 0 || performance.now() - (options.lastIngestAt?.() ?? -Infinity) < QUIET_MS;
      if (ingesting && behind < options.maxBehind) {
        await this.sleep(BUSY_WAIT_MS);
        continue;
      }
      let done: boolean;
      let idleMs: number | undefined;
      try {
        ({ done, idleMs } = await options.step(behind >= options.maxBehind));
        this.failures = 0;
      } catch (error) {
        if (this.stopped) return;
        this.failures++;
        if (this.failures === 1) options.logger.warn(options.failed(error as Error));
        await this.sleep(Math.min(options.pollMs, 100 * 2 ** this.failures));
        continue;
      }
      if (done) await this.sleep(options.pollMs);
      else if (idleMs !== undefined) await this.sleep(idleMs);
      // Far behind while deliveries keep coming: one step per BUSY_WAIT_MS, a bounded share of
      // the machine (its walk and its slices), so a long burst is not slowed by its own upkeep.
      // Not woken early: every applied batch wakes the loop, which would undo the pacing.
      else if (ingesting) await new Promise((resolve) => setTimeout(resolve, BUSY_WAIT_MS).unref());
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = done;
    });
  }
}
