import type { JournalEvent } from '../new-event.js';
import type { Logger } from '../logger.js';
import { deferred, type Deferred, type Entry } from './entry.js';

/**
 * The journal's applier: moves written records into the database in large batches (one binary
 * COPY each, with the journal position in the same transaction). A batch the database refuses
 * because of one row's data is split until that row is alone, which is dropped (logged); any
 * other failure keeps the records and retries with backoff. The embedded database pays ~0.5 ms
 * per statement, so under load a batch waits a few ms to gather more rows.
 */

/** The database side the applier writes to (the store's journal side). */
export interface ApplyTarget {
  /**
   * Stores every one of the events (ids given) and sets journal_state.applied_id, in one
   * transaction; a row it cannot store fails the whole call (with the database's SQLSTATE).
   */
  applyJournalBatch(events: readonly JournalEvent[], appliedId: number): Promise<void>;
  journalPosition(): Promise<{ appliedId: number; maxId: number }>;
}

/** Rows per applied batch (one COPY); past ~120 rows the per-statement cost no longer shows. */
const MAX_APPLY_ROWS = 1_000;
const MAX_APPLY_BYTES = 16 * 1024 * 1024;
/** The applier gathers for up to GATHER_MS when fewer than GATHER_ROWS wait and it applied within GATHER_AFTER_MS. */
const GATHER_ROWS = 256;
const GATHER_MS = 4;
const GATHER_AFTER_MS = 20;
/** SQLSTATE classes that mean this row's data, not the database, is the problem. */
const ROW_ERROR_CLASSES = ['22', '23'];

export class Applier {
  /** Written, not yet applied, in id order. */
  readonly queue: Entry[] = [];
  private wakeUp: Deferred<void> | null = null;
  private running: Promise<void> | null = null;
  private paused = false;
  private stopping = false;
  private lastApplied = -Infinity;
  /** Ends the gathering wait early (a read is waiting, or a stop). */
  private endGather: (() => void) | null = null;

  constructor(
    private readonly target: ApplyTarget,
    private readonly logger: Logger,
    private readonly hooks: {
      /** `batch` (the head of the queue, now removed) is in the database (`stored`), or was dropped. */
      applied(batch: Entry[], stored: boolean): void;
      /** A read waits for the applier, or the journal is closing: do not gather. */
      hurry(): boolean;
    },
  ) {}

  start(): void {
    this.running ??= this.run();
  }

  enqueue(entries: readonly Entry[]): void {
    for (const entry of entries) this.queue.push(entry);
    this.wake();
  }

  wake(): void {
    const wake = this.wakeUp;
    this.wakeUp = null;
    wake?.resolve();
  }

  /** Cuts a gathering wait short (a read is waiting). */
  hurry(): void {
    this.endGather?.();
  }

  /** Stops applying (tests: backpressure, reads waiting). */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.wake();
  }

  /** Ends the loop after the batch in progress. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.paused = false;
    this.endGather?.();
    this.wake();
    await this.running;
  }

  private async run(): Promise<void> {
    let failures = 0;
    for (;;) {
      if (this.stopping) return;
      if (this.queue.length === 0 || this.paused) {
        this.wakeUp ??= deferred();
        await this.wakeUp.promise;
        continue;
      }
      if (this.shouldGather()) {
        // Under sustained load, a few ms more per batch make batches several times larger: the
        // embedded database pays ~0.5 ms per statement (docs/benchmarks.md). A waiting read or
        // a stop cuts the wait short.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, GATHER_MS);
          this.endGather = () => (clearTimeout(timer), resolve());
        });
        this.endGather = null;
      }
      const batch = this.takeBatch();
      try {
        await this.applyOrIsolate(batch);
        this.lastApplied = performance.now();
        failures = 0;
      } catch (error) {
        // The database itself failed (not one row): keep the records, back off, try again.
        failures++;
        const delay = Math.min(30_000, 250 * 2 ** Math.min(failures, 7));
        this.logger.error(`journal: storing ${batch.length} events in the database failed (${(error as Error).message}); retrying in ${delay} ms`);
        await new Promise((resolve) => setTimeout(resolve, delay));
        await this.skipCommitted().catch(() => {});
      }
    }
  }

  /**
   * A failed batch may still have committed, its answer lost on the way (the database worker
   * ended right after): the database's own position says so, and those records are done —
   * applied again they would only collide with themselves.
   */
  private async skipCommitted(): Promise<void> {
    const { appliedId } = await this.target.journalPosition();
    let done = 0;
    while (done < this.queue.length && this.queue[done]!.event.id <= appliedId) done++;
    if (done > 0) this.applied(this.queue.slice(0, done), true);
  }

  /** A small batch right after the last one, and nobody waiting to read: gather a little longer. */
  private shouldGather(): boolean {
    return this.queue.length < GATHER_ROWS && !this.stopping && !this.hooks.hurry() && performance.now() - this.lastApplied < GATHER_AFTER_MS;
  }

  private takeBatch(): Entry[] {
    let bytes = 0;
    let count = 0;
    while (count < this.queue.length && count < MAX_APPLY_ROWS && (count === 0 || bytes + this.queue[count]!.bytes <= MAX_APPLY_BYTES)) {
      bytes += this.queue[count]!.bytes;
      count++;
    }
    return this.queue.slice(0, count);
  }

  /**
   * Applies `batch` (a prefix of the queue). A batch the database refuses because of one row's
   * data is split until that row is alone; the row is then dropped with an error in the log (it
   * can never be stored), and the rest is stored. Any other failure propagates (retried whole).
   */
  private async applyOrIsolate(batch: Entry[]): Promise<void> {
    try {
      await this.target.applyJournalBatch(
        batch.map((entry) => entry.event),
        batch[batch.length - 1]!.event.id,
      );
      this.applied(batch, true);
    } catch (error) {
      if (!isRowError(error)) throw error;
      if (batch.length > 1) {
        const half = Math.ceil(batch.length / 2);
        await this.applyOrIsolate(batch.slice(0, half));
        await this.applyOrIsolate(batch.slice(half));
        return;
      }
      const { event } = batch[0]!;
      this.logger.error(`journal: event ${event.id} (${event.provider}) could not be stored and was dropped: ${(error as Error).message}`);
      await this.target.applyJournalBatch([], event.id);
      this.applied(batch, false);
    }
  }

  private applied(batch: Entry[], stored: boolean): void {
    this.queue.splice(0, batch.length);
    this.hooks.applied(batch, stored);
  }
}

function isRowError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && ROW_ERROR_CLASSES.some((prefix) => code.startsWith(prefix));
}
