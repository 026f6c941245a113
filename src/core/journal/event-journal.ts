import { join } from 'node:path';
import type { EventSummary } from '../../shared/events.js';
import { SwitchboardError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { JournalEvent, NewJournalEvent } from '../new-event.js';
import { Applier, type ApplyTarget } from './applier.js';
import { deferred, entryFor, keyOf, type Deferred, type Entry, type JournalInsert } from './entry.js';
import type { JournalKey } from './journal-key.js';
import { encodeRecord } from './record.js';
import { ReceiveClock } from './receive-clock.js';
import { Redeliveries, type KeySource } from './redeliveries.js';
import { JournalSegments } from './segments.js';
import { errnoOf, WriteTrouble } from './write-trouble.js';

/**
 * Ack from a journal (DESIGN §5): a delivery is appended to `<data dir>/journal` and answered;
 * an applier (applier.ts) moves journal records into the database in large batches (binary COPY),
 * recording how far it got in the same transaction. The receiver no longer waits for the embedded
 * database, whose cost is largely per statement, and the database gets hundreds of rows each.
 *
 * What it guarantees, and how:
 * - Nothing acknowledged is lost or stored twice: a record is applied together with the new
 *   position (journal_state.applied_id) in one transaction; on start the records past that
 *   position are applied before the ports open. Ids are allocated here, in append order, so the
 *   position is simply the highest applied id.
 * - Read-your-writes: `barrier()` — awaited by every read in the store — waits until everything
 *   written to the journal when the read began is in the database.
 * - Exact dedupe across journal and database (redeliveries.ts).
 * - Bounded: past MAX_LAG_RECORDS / MAX_LAG_BYTES not yet applied, a delivery waits up to
 *   BACKPRESSURE_WAIT_MS, then is refused with JournalFullError (503 + Retry-After), instead of
 *   the journal and this process's memory growing without limit.
 */

/** The database side of the journal (the store's JournalSide implements it; the only code that writes SQL). */
export interface JournalTarget extends ApplyTarget, KeySource {}

export interface JournalOptions {
  maxLagRecords?: number;
  maxLagBytes?: number;
  backpressureWaitMs?: number;
  /** A read waits at most this long for the applier before it fails (the database is stuck). */
  barrierTimeoutMs?: number;
  /** Told how many acknowledged events the database lacks at open (they are applied before open resolves). */
  onRecover?: (count: number, message: string) => void;
  /** Called once per applied batch with its events, in id order, after they are visible. */
  onApplied?: (events: readonly EventSummary[]) => void;
}

export const MAX_LAG_RECORDS = 50_000;
export const MAX_LAG_BYTES = 128 * 1024 * 1024;
const BACKPRESSURE_WAIT_MS = 1_000;
const BARRIER_TIMEOUT_MS = 15_000;
const FILTER_FILE = 'keys.bloom';

/** Thrown when the applier is too far behind: answer 503 with Retry-After. */
export class JournalFullError extends SwitchboardError {
  readonly retryAfterS = 1;
  constructor(lag: number) {
    super('storage_unavailable', `switchboard is ${lag} events behind writing to its database`, {
      hint: 'deliveries are arriving faster than the database can store them; retry in a second',
    });
  }
}

export class EventJournal {
  private nextId = 1;
  private appliedId = 0;
  private writtenId = 0;
  /** Allocated, waiting for the next append. */
  private toWrite: Entry[] = [];
  private lagBytes = 0;
  private readonly applier: Applier;
  private readonly redeliveries: Redeliveries;
  private writeScheduled = false;
  private writing: Promise<void> | null = null;
  /** Maintenance statements running (maintenance()): reads wait for them however long they take. */
  private maintaining = 0;
  private closing = false;
  private lastSubmit = -Infinity;
  private readonly clock = new ReceiveClock();
  private readonly barrierWaiters: { target: number; done: Deferred<void>; timer: NodeJS.Timeout }[] = [];
  private drainWaiters: (() => void)[] = [];
  private readonly maxLagRecords: number;
  private readonly maxLagBytes: number;
  private readonly writeTrouble: WriteTrouble;

  private constructor(
    target: JournalTarget,
    private readonly segments: JournalSegments,
    private readonly key: JournalKey,
    private readonly logger: Logger,
    private readonly options: JournalOptions,
    filterPath: string,
  ) {
    this.maxLagRecords = options.maxLagRecords ?? MAX_LAG_RECORDS;
    this.maxLagBytes = options.maxLagBytes ?? MAX_LAG_BYTES;
    this.applier = new Applier(target, logger, {
      applied: (batch, stored) => this.applied(batch, stored),
      hurry: () => this.barrierWaiters.length > 0 || this.closing,
    });
    this.redeliveries = new Redeliveries(target, logger, filterPath, () => this.closing);
    this.writeTrouble = new WriteTrouble(segments.dir, logger);
  }

  /**
   * Opens `<dataDir>/journal`, applies what the database does not have yet (the tail a crash
   * left), and starts the applier. The caller opens its ports after this resolves.
   */
  static async open(dataDir: string, target: JournalTarget, logger: Logger, options: JournalOptions = {}): Promise<EventJournal> {
    const dir = join(dataDir, 'journal');
    const position = await target.journalPosition();
    const { segments, key, events: tail, lastId: lastJournalId } = await JournalSegments.open(dir, logger, position.appliedId);
    const journal = new EventJournal(target, segments, key, logger, options, join(dir, FILTER_FILE));
    journal.appliedId = position.appliedId;
    journal.writtenId = Math.max(position.appliedId, lastJournalId);
    journal.nextId = Math.max(position.maxId, position.appliedId, lastJournalId) + 1;
    const entries = tail.map(entryFor);
    for (const entry of entries) {
      if (entry.key) journal.redeliveries.appended(entry as Entry & { key: string });
      journal.lagBytes += entry.bytes;
    }
    journal.applier.enqueue(entries);
    if (tail.length > 0) {
      const message = `journal: applying ${tail.length} events received before the last stop`;
      if (options.onRecover) options.onRecover(tail.length, message);
      else logger.info(message);
    }
    await journal.writeTrouble.check();
    journal.applier.start();
    await journal.barrier();
    await segments.release(journal.appliedId);
    journal.redeliveries.startLoading();
    return journal;
  }

  /** Why deliveries cannot be stored right now, as one line (path, cause, fix), or null. */
  trouble(): Promise<string | null> {
    return this.writeTrouble.line();
  }

  /**
   * Appends the event and resolves once it is written (the delivery may then be acknowledged),
   * or finds the first event with the same (provider, external_id).
   */
  async submit(input: NewJournalEvent): Promise<JournalInsert> {
    if (this.closing) throw new SwitchboardError('storage_unavailable', 'the event store is closed');
    this.lastSubmit = performance.now();
    if (this.lagging()) await this.waitForRoom();
    const key = keyOf(input.provider, input.external_id);
    if (key === null) return this.append(input);
    return this.redeliveries.firstOr(key, { provider: input.provider, external_id: input.external_id! }, () => this.append(input));
  }

  /**
   * Runs database maintenance that holds the database longer than a read would wait (retention's
   * VACUUM): meanwhile a read waits for the applier as long as it takes, rather than failing as
   * "not catching up" after BARRIER_TIMEOUT_MS.
   */
  async maintenance<T>(work: () => Promise<T>): Promise<T> {
    this.maintaining++;
    try {
      return await work();
    } finally {
      this.maintaining--;
    }
  }

  /** Resolves once every event written to the journal before this call is visible to reads. */
  barrier(): Promise<void> {
    const target = this.writtenId;
    if (target <= this.appliedId) return Promise.resolve();
    const done = deferred<void>();
    const timeoutMs = this.options.barrierTimeoutMs ?? BARRIER_TIMEOUT_MS;
    const expire = () => {
      // Held up by maintenance, not stuck: wait another round.
      if (this.maintaining > 0) {
        const waiter = this.barrierWaiters.find((candidate) => candidate.done === done);
        if (waiter) waiter.timer = setTimeout(expire, timeoutMs).unref();
        return;
      }
      const index = this.barrierWaiters.findIndex((waiter) => waiter.done === done);
      if (index >= 0) this.barrierWaiters.splice(index, 1);
      done.reject(
        new SwitchboardError('storage_unavailable', `the database is ${target - this.appliedId} events behind the journal and not catching up`, {
          hint: 'see the log for the database error; acknowledged events stay in the journal and are stored once it recovers',
        }),
      );
    };
    const timer = setTimeout(expire, timeoutMs);
    timer.unref();
    this.barrierWaiters.push({ target, done, timer });
    this.applier.hurry();
    return done.promise;
  }

  /**
   * The store deleted events (retention, clear): redeliveries are checked in the database again
   * rather than answered from memory, so one whose first copy is gone is stored anew.
   */
  forgetStoredKeys(): void {
    this.redeliveries.forgetStored();
  }

  /** Stops applying (tests: backpressure, reads waiting). Appends continue up to the bound. */
  pauseApplier(): void {
    this.applier.pause();
  }

  resumeApplier(): void {
    this.applier.resume();
  }

  get stats(): { appliedId: number; writtenId: number; lagRecords: number; lagBytes: number; keyLookups: number } {
    return {
      appliedId: this.appliedId,
      writtenId: this.writtenId,
      lagRecords: this.applier.queue.length + this.toWrite.length,
      lagBytes: this.lagBytes,
      keyLookups: this.redeliveries.keyLookups,
    };
  }

  /**
   * When the last delivery came, stored or answered as a redelivery (performance.now() ms;
   * -Infinity before the first): background work waits while they keep coming.
   */
  get lastSubmitAt(): number {
    return this.lastSubmit;
  }

  /** The next id this journal will give (what a freshly allocated event would get). */
  get allocatedThrough(): number {
    return this.nextId - 1;
  }

  /** Where the redelivery filter came from (tests; null while it loads). */
  get filterSource(): 'file' | 'database' | null {
    return this.redeliveries.filterSource;
  }

  /** Resolves once the redelivery filter is loaded (tests and benchmarks). */
  filterLoaded(): Promise<void> {
    return this.redeliveries.loaded();
  }

  /** Waits until everything is written and applied, then closes the files. */
  async close(): Promise<void> {
    this.closing = true;
    this.applier.resume();
    while (this.writeScheduled || this.writing) await (this.writing ?? new Promise((resolve) => setImmediate(resolve)));
    await this.barrier().catch((error: Error) => this.logger.error(`journal: closing with events not yet in the database (${error.message}); they are applied at the next start`));
    await this.applier.stop();
    await this.redeliveries.loaded();
    await this.segments.close(this.appliedId);
    await this.redeliveries.save(this.appliedId);
  }

  private lagging(): boolean {
    return this.applier.queue.length + this.toWrite.length >= this.maxLagRecords || this.lagBytes >= this.maxLagBytes;
  }

  private async waitForRoom(): Promise<void> {
    const deadline = Date.now() + (this.options.backpressureWaitMs ?? BACKPRESSURE_WAIT_MS);
    while (this.lagging()) {
      const left = deadline - Date.now();
      if (left <= 0 || this.closing) throw new JournalFullError(this.applier.queue.length + this.toWrite.length);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.drainWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Allocates the event's id and time and queues it for the next write; resolves once written. */
  private append(input: NewJournalEvent): Promise<JournalInsert> {
    if (this.closing) return Promise.reject(new SwitchboardError('storage_unavailable', 'the event store is closed'));
    const event: JournalEvent = { ...input, id: this.nextId++, received_at: input.received_at ?? this.clock.now() };
    const entry = entryFor(event);
    entry.record = encodeRecord(event, this.key);
    if (entry.key) this.redeliveries.appended(entry as Entry & { key: string });
    this.toWrite.push(entry);
    this.lagBytes += entry.bytes;
    this.scheduleWrite();
    return entry.ack.promise;
  }

  /** Appends in one write what arrived during this turn of the event loop; one write at a time. */
  private scheduleWrite(): void {
    if (this.writeScheduled || this.writing) return;
    this.writeScheduled = true;
    setImmediate(() => {
      this.writeScheduled = false;
      this.writing = this.writeAll().finally(() => {
        this.writing = null;
        if (this.toWrite.length > 0) this.scheduleWrite();
      });
    });
  }

  private async writeAll(): Promise<void> {
    while (this.toWrite.length > 0) {
      const batch = this.toWrite.splice(0);
      this.clock.nextWrite();
      const first = batch[0]!.event.id;
      const last = batch[batch.length - 1]!.event.id;
      try {
        await this.segments.append(Buffer.concat(batch.map((entry) => entry.record!)), first, last);
      } catch (error) {
        this.writeTrouble.appendFailed(error);
        for (const entry of batch) {
          this.redeliveries.settled(entry, false);
          this.lagBytes -= entry.bytes;
          entry.visible.resolve(false);
          entry.ack.reject(
            // Not the path or the fix: the sender is not the one to act (the log and /healthz say it all).
            new SwitchboardError('storage_unavailable', `switchboard cannot store deliveries right now (writing its journal failed: ${errnoOf(error)})`, {
              hint: 'the sender should retry; the operator sees why in the log and at /healthz',
              cause: error,
            }),
          );
        }
        this.signalDrain();
        continue;
      }
      this.writtenId = last;
      this.writeTrouble.appendWorked();
      for (const entry of batch) {
        entry.record = null;
        entry.ack.resolve({ event: entry.summary, duplicate: false, visible: entry.visible.promise });
      }
      this.applier.enqueue(batch);
    }
  }

  /** The applier stored `batch` (or dropped its one row): visible to reads, the position moves on. */
  private applied(batch: Entry[], stored: boolean): void {
    this.appliedId = batch[batch.length - 1]!.event.id;
    for (const entry of batch) {
      this.lagBytes -= entry.bytes;
      this.redeliveries.settled(entry, stored);
      entry.visible.resolve(stored);
    }
    for (let i = this.barrierWaiters.length - 1; i >= 0; i--) {
      const waiter = this.barrierWaiters[i]!;
      if (waiter.target > this.appliedId) continue;
      this.barrierWaiters.splice(i, 1);
      clearTimeout(waiter.timer);
      waiter.done.resolve();
    }
    this.signalDrain();
    if (stored) this.options.onApplied?.(batch.map((entry) => entry.summary));
    void this.segments.release(this.appliedId);
  }

  private signalDrain(): void {
    if (this.lagging()) return;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const wake of waiters) wake();
  }
}
