import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EventSummary } from '../../shared/events.js';
import { SwitchboardError } from '../errors.js';
import type { Logger } from '../logger.js';
import { KeyFilter } from './key-filter.js';
import { encodeRecord, type JournalEvent } from './record.js';
import { JournalSegments } from './segments.js';

/**
 * Ack from a journal (DESIGN §5): a delivery is appended to `<data dir>/journal` and answered;
 * an applier moves journal records into the database in large batches (binary COPY), recording
 * how far it got in the same transaction. The receiver no longer waits for the embedded
 * database, whose cost is largely per statement, and the database gets hundreds of rows each.
 *
 * What it guarantees, and how:
 * - Nothing acknowledged is lost or stored twice: a record is applied together with the new
 *   position (journal_state.applied_id) in one transaction; on start the records past that
 *   position are applied before the ports open. Ids are allocated here, in append order, so the
 *   position is simply the highest applied id.
 * - Read-your-writes: `barrier()` — awaited by every read in the store — waits until everything
 *   written to the journal when the read began is in the database.
 * - Exact dedupe across journal and database: a key still in the journal, or among the newest
 *   stored ones, is found in memory; otherwise a Bloom filter of the database's keys says "new"
 *   (no query) or "maybe" (one batched index lookup, during which the key is held so a
 *   concurrent redelivery waits for it).
 * - Bounded: past MAX_LAG_RECORDS / MAX_LAG_BYTES not yet applied, a delivery waits up to
 *   BACKPRESSURE_WAIT_MS, then is refused with JournalFullError (503 + Retry-After), instead of
 *   the journal and this process's memory growing without limit.
 */

export interface NewJournalEvent extends Omit<JournalEvent, 'id' | 'received_at'> {
  /** Kept when given (imports); otherwise the time of acknowledgement. */
  received_at?: string;
}

export interface JournalInsert {
  event: EventSummary;
  duplicate: boolean;
  /** Resolves when the event is visible to reads (true), or was dropped by the database (false). */
  visible: Promise<boolean>;
}

/** The database side of the journal (EventStore implements it; the only code that writes SQL). */
export interface JournalTarget {
  /**
   * Stores every one of the events (ids given) and sets journal_state.applied_id, in one
   * transaction; a row it cannot store fails the whole call (with the database's SQLSTATE).
   */
  applyJournalBatch(events: readonly JournalEvent[], appliedId: number): Promise<void>;
  journalPosition(): Promise<{ appliedId: number; maxId: number }>;
  eventsByKeys(keys: readonly { provider: string; external_id: string }[]): Promise<EventSummary[]>;
  /** Keys of stored events with id > afterId, in id order (the Bloom filter's load). */
  eventKeysAfter(afterId: number, limit: number): Promise<{ id: number; provider: string; external_id: string }[]>;
  estimatedEventCount(): Promise<number>;
}

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
/** Rows per applied batch (one COPY); past ~120 rows the per-statement cost no longer shows. */
const MAX_APPLY_ROWS = 1_000;
const MAX_APPLY_BYTES = 16 * 1024 * 1024;
/** The applier gathers for up to GATHER_MS when fewer than GATHER_ROWS wait and it applied within GATHER_AFTER_MS. */
const GATHER_ROWS = 256;
const GATHER_MS = 4;
const GATHER_AFTER_MS = 20;
/** Stored keys remembered for redeliveries (~300 bytes each). */
const STORED_KEYS = 20_000;
const VISIBLE = Promise.resolve(true);
/** Keys per redelivery lookup (two text arrays as parameters). */
const MAX_LOOKUP_KEYS = 1_000;
/** Keys read per statement while the filter loads: small, so reads and applied batches interleave. */
const KEY_SCAN_ROWS = 2_000;
const FILTER_FILE = 'keys.bloom';
/** SQLSTATE classes that mean this row's data, not the database, is the problem. */
const ROW_ERROR_CLASSES = ['22', '23'];

/** Thrown when the applier is too far behind: answer 503 with Retry-After. */
export class JournalFullError extends SwitchboardError {
  readonly retryAfterS = 1;
  constructor(lag: number) {
    super('storage_unavailable', `switchboard is ${lag} events behind writing to its database`, {
      hint: 'deliveries are arriving faster than the database can store them; retry in a second',
    });
  }
}

interface Entry {
  event: JournalEvent;
  summary: EventSummary;
  key: string | null;
  bytes: number;
  record: Buffer | null;
  ack: Deferred<JournalInsert>;
  visible: Deferred<boolean>;
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const keyOf = (provider: string, externalId: string | null) => (externalId === null ? null : `${provider}\u0000${externalId}`);

/** ISO-8601 with microseconds, like the database's to_char(… 'US'). */
function isoMicros(micros: number): string {
  const ms = Math.floor(micros / 1000);
  return `${new Date(ms).toISOString().slice(0, -1)}${String(micros - ms * 1000).padStart(3, '0')}Z`;
}

const nowMicros = () => Math.floor((performance.timeOrigin + performance.now()) * 1000);

export class EventJournal {
  private nextId = 1;
  private appliedId = 0;
  private writtenId = 0;
  /** Allocated, waiting for the next append. */
  private toWrite: Entry[] = [];
  /** Written, not yet applied, in id order. */
  private toApply: Entry[] = [];
  private lagBytes = 0;
  private readonly pendingKeys = new Map<string, Entry>();
  /**
   * Keys of events applied or found stored lately (the newest STORED_KEYS): a storm of
   * redeliveries — a provider retrying, a sender stuck on one id — is answered from memory
   * instead of one database lookup per turn of the event loop.
   */
  private readonly storedKeys = new Map<string, EventSummary>();
  private readonly storedRing: ({ key: string; event: EventSummary } | undefined)[] = [];
  private storedNext = 0;
  private readonly deciding = new Map<string, Promise<JournalInsert>>();
  private lookups: { key: { provider: string; external_id: string }; done: Deferred<EventSummary | null> }[] = [];
  private lookingUp = false;
  /** Keys looked up in the database so far (tests). */
  private keyLookups = 0;
  private filter: KeyFilter | null = null;
  private filterLoading: Promise<void> | null = null;
  private writeScheduled = false;
  private writing: Promise<void> | null = null;
  private applierWake: Deferred<void> | null = null;
  private applier: Promise<void> | null = null;
  private paused = false;
  /** Maintenance statements running (maintenance()): reads wait for them however long they take. */
  private maintaining = 0;
  private closing = false;
  private stopping = false;
  /** Keys appended while the filter loads (added to it when the load ends). */
  private keysDuringLoad: string[] = [];
  private lastMicros = 0;
  private lastSubmit = -Infinity;
  private lastApplied = -Infinity;
  /** Ends the applier's gathering wait early (a read is waiting, or a stop). */
  private endGather: (() => void) | null = null;
  /** Where the redelivery filter came from (tests; null while it loads). */
  filterSource: 'file' | 'database' | null = null;
  /** The highest event id the filter's load read (keys applied later are added as they are appended). */
  private filterThroughId = 0;
  private currentBatchTime: string | null = null;
  private readonly barrierWaiters: { target: number; done: Deferred<void>; timer: NodeJS.Timeout }[] = [];
  private drainWaiters: (() => void)[] = [];
  private readonly maxLagRecords: number;
  private readonly maxLagBytes: number;

  private constructor(
    private readonly target: JournalTarget,
    private readonly segments: JournalSegments,
    private readonly logger: Logger,
    private readonly options: JournalOptions,
    private readonly filterPath: string,
  ) {
    this.maxLagRecords = options.maxLagRecords ?? MAX_LAG_RECORDS;
    this.maxLagBytes = options.maxLagBytes ?? MAX_LAG_BYTES;
  }

  /**
   * Opens `<dataDir>/journal`, applies what the database does not have yet (the tail a crash
   * left), and starts the applier. The caller opens its ports after this resolves.
   */
  static async open(dataDir: string, target: JournalTarget, logger: Logger, options: JournalOptions = {}): Promise<EventJournal> {
    const dir = join(dataDir, 'journal');
    const position = await target.journalPosition();
    const { segments, events: tail, lastId: lastJournalId } = await JournalSegments.open(dir, logger, position.appliedId);
    const journal = new EventJournal(target, segments, logger, options, join(dir, FILTER_FILE));
    journal.appliedId = position.appliedId;
    journal.writtenId = Math.max(position.appliedId, lastJournalId);
    journal.nextId = Math.max(position.maxId, position.appliedId, lastJournalId) + 1;
    for (const event of tail) {
      const entry = journal.entryFor(event);
      if (entry.key) journal.pendingKeys.set(entry.key, entry);
      journal.toApply.push(entry);
      journal.lagBytes += entry.bytes;
    }
    if (tail.length > 0) {
      const message = `journal: applying ${tail.length} events received before the last stop`;
      if (options.onRecover) options.onRecover(tail.length, message);
      else logger.info(message);
    }
    journal.applier = journal.runApplier();
    await journal.barrier();
    await segments.release(journal.appliedId);
    journal.filterLoading = journal.loadFilter();
    return journal;
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
    if (key === null) return this.append(input, null);
    for (;;) {
      const pending = this.pendingKeys.get(key);
      if (pending) return { event: pending.summary, duplicate: true, visible: pending.visible.promise };
      const stored = this.storedKeys.get(key);
      if (stored) return { event: stored, duplicate: true, visible: VISIBLE };
      const decision = this.deciding.get(key);
      if (!decision) break;
      try {
        const first = await decision;
        return { event: first.event, duplicate: true, visible: first.visible };
      } catch {
        // The first copy failed to append: this one decides afresh.
      }
    }
    if (this.filter && !this.filterLoading && !this.filter.mayHave(key)) return this.append(input, key);
    const decision = this.lookUp({ provider: input.provider, external_id: input.external_id! }).then((found) => {
      if (!found) return this.append(input, key);
      this.rememberStored(key, found);
      return { event: found, duplicate: true, visible: VISIBLE };
    });
    this.deciding.set(key, decision);
    const forget = () => {
      if (this.deciding.get(key) === decision) this.deciding.delete(key);
    };
    decision.then(forget, forget);
    return decision;
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
    this.endGather?.();
    return done.promise;
  }

  /**
   * The store deleted events (retention, clear): redeliveries are checked in the database again
   * rather than answered from memory, so one whose first copy is gone is stored anew.
   */
  forgetStoredKeys(): void {
    this.storedKeys.clear();
    this.storedRing.length = 0;
    this.storedNext = 0;
  }

  /** Stops applying (tests: backpressure, reads waiting). Appends continue up to the bound. */
  pauseApplier(): void {
    this.paused = true;
  }

  resumeApplier(): void {
    this.paused = false;
    this.wakeApplier();
  }

  get stats(): { appliedId: number; writtenId: number; lagRecords: number; lagBytes: number; keyLookups: number } {
    return {
      appliedId: this.appliedId,
      writtenId: this.writtenId,
      lagRecords: this.toApply.length + this.toWrite.length,
      lagBytes: this.lagBytes,
      keyLookups: this.keyLookups,
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

  /** Resolves once the redelivery filter is loaded (tests and benchmarks). */
  async filterLoaded(): Promise<void> {
    while (this.filterLoading) await this.filterLoading;
  }

  /** Waits until everything is written and applied, then closes the files. */
  async close(): Promise<void> {
    this.closing = true;
    this.paused = false;
    while (this.writeScheduled || this.writing) await (this.writing ?? new Promise((resolve) => setImmediate(resolve)));
    this.wakeApplier();
    await this.barrier().catch((error: Error) => this.logger.error(`journal: closing with events not yet in the database (${error.message}); they are applied at the next start`));
    this.stopping = true;
    this.endGather?.();
    this.wakeApplier();
    await this.applier;
    await this.filterLoading?.catch(() => {});
    await this.segments.close(this.appliedId);
    await this.saveFilter();
  }

  private lagging(): boolean {
    return this.toApply.length + this.toWrite.length >= this.maxLagRecords || this.lagBytes >= this.maxLagBytes;
  }

  private async waitForRoom(): Promise<void> {
    const deadline = Date.now() + (this.options.backpressureWaitMs ?? BACKPRESSURE_WAIT_MS);
    while (this.lagging()) {
      const left = deadline - Date.now();
      if (left <= 0 || this.closing) throw new JournalFullError(this.toApply.length + this.toWrite.length);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.drainWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private entryFor(event: JournalEvent): Entry {
    const summary: EventSummary = {
      id: event.id,
      provider: event.provider,
      family: event.family,
      event_type: event.event_type,
      external_id: event.external_id,
      origin: event.origin,
      trust_mode: event.trust_mode,
      verified: event.verified,
      payload_size: event.payload.byteLength,
      received_at: event.received_at,
    };
    const entry: Entry = {
      event,
      summary,
      key: keyOf(event.provider, event.external_id),
      bytes: event.payload.byteLength + 512,
      record: null,
      ack: deferred(),
      visible: deferred(),
    };
    entry.ack.promise.catch(() => {});
    return entry;
  }

  private append(input: NewJournalEvent, key: string | null): Promise<JournalInsert> {
    if (this.closing) return Promise.reject(new SwitchboardError('storage_unavailable', 'the event store is closed'));
    const event: JournalEvent = { ...input, id: this.nextId++, received_at: input.received_at ?? this.batchTime() };
    const entry = this.entryFor(event);
    entry.record = encodeRecord(event);
    if (key) {
      this.pendingKeys.set(key, entry);
      this.filter?.add(key);
      if (this.filterLoading) this.keysDuringLoad.push(key);
      else if (this.filter?.saturated) this.filterLoading = this.loadFilter(true);
    }
    this.toWrite.push(entry);
    this.lagBytes += entry.bytes;
    this.scheduleWrite();
    return entry.ack.promise;
  }

  /**
   * The receive time of the events appended in this turn of the event loop: one per write, as a
   * group commit gave one now() per transaction. Keyset pagination is on (received_at, id), so
   * shared times are expected; the time never goes back, whatever the wall clock does.
   */
  private batchTime(): string {
    if (this.currentBatchTime) return this.currentBatchTime;
    const micros = Math.max(nowMicros(), this.lastMicros + 1);
    this.lastMicros = micros;
    this.currentBatchTime = isoMicros(micros);
    return this.currentBatchTime;
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
      this.currentBatchTime = null;
      const first = batch[0]!.event.id;
      const last = batch[batch.length - 1]!.event.id;
      try {
        await this.segments.append(Buffer.concat(batch.map((entry) => entry.record!)), first, last);
      } catch (error) {
        this.logger.error(`journal: appending ${batch.length} events failed: ${(error as Error).message}`);
        for (const entry of batch) {
          if (entry.key && this.pendingKeys.get(entry.key) === entry) this.pendingKeys.delete(entry.key);
          this.lagBytes -= entry.bytes;
          entry.visible.resolve(false);
          entry.ack.reject(
            new SwitchboardError('storage_unavailable', `writing to the journal failed (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, {
              hint: 'is the disk full? the sender should retry',
              cause: error,
            }),
          );
        }
        this.signalDrain();
        continue;
      }
      this.writtenId = last;
      for (const entry of batch) {
        entry.record = null;
        this.toApply.push(entry);
        entry.ack.resolve({ event: entry.summary, duplicate: false, visible: entry.visible.promise });
      }
      this.wakeApplier();
    }
  }

  private wakeApplier(): void {
    const wake = this.applierWake;
    this.applierWake = null;
    wake?.resolve();
  }

  private async runApplier(): Promise<void> {
    let failures = 0;
    for (;;) {
      if (this.stopping) return;
      if (this.toApply.length === 0 || this.paused) {
        this.applierWake ??= deferred();
        await this.applierWake.promise;
        continue;
      }
      if (this.shouldGather()) {
        // Under sustained load, a few ms more per batch make batches several times larger: the
        // embedded database pays ~0.5 ms per statement (docs/benchmarks.md). A waiting read or
        // a stop cuts the wait short (wakeApplier).
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
    while (done < this.toApply.length && this.toApply[done]!.event.id <= appliedId) done++;
    if (done > 0) this.applied(this.toApply.slice(0, done), true);
  }

  /** A small batch right after the last one, and nobody waiting to read: gather a little longer. */
  private shouldGather(): boolean {
    return (
      this.toApply.length < GATHER_ROWS &&
      this.barrierWaiters.length === 0 &&
      !this.closing &&
      !this.stopping &&
      performance.now() - this.lastApplied < GATHER_AFTER_MS
    );
  }

  private takeBatch(): Entry[] {
    let bytes = 0;
    let count = 0;
    while (count < this.toApply.length && count < MAX_APPLY_ROWS && (count === 0 || bytes + this.toApply[count]!.bytes <= MAX_APPLY_BYTES)) {
      bytes += this.toApply[count]!.bytes;
      count++;
    }
    return this.toApply.slice(0, count);
  }

  /**
   * Applies `batch` (a prefix of toApply). A batch the database refuses because of one row's data
   * is split until that row is alone; the row is then dropped with an error in the log (it can
   * never be stored), and the rest is stored. Any other failure propagates (retried whole).
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
    this.toApply.splice(0, batch.length);
    this.appliedId = batch[batch.length - 1]!.event.id;
    for (const entry of batch) {
      this.lagBytes -= entry.bytes;
      if (entry.key && this.pendingKeys.get(entry.key) === entry) {
        this.pendingKeys.delete(entry.key);
        if (stored) this.rememberStored(entry.key, entry.summary);
      }
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

  /**
   * Keeps the newest STORED_KEYS keys known to be stored, the oldest forgotten first: a ring of
   * what was remembered (a Map's own first key is O(deleted entries) to reach once many were
   * deleted — ~11 µs per delivery here).
   */
  private rememberStored(key: string, event: EventSummary): void {
    const oldest = this.storedRing[this.storedNext];
    if (oldest && this.storedKeys.get(oldest.key) === oldest.event) this.storedKeys.delete(oldest.key);
    this.storedRing[this.storedNext] = { key, event };
    this.storedNext = (this.storedNext + 1) % STORED_KEYS;
    this.storedKeys.set(key, event);
  }

  private signalDrain(): void {
    if (this.lagging()) return;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const wake of waiters) wake();
  }

  /**
   * Batched like a group commit: one lookup at a time, and the keys asked while it runs share
   * the next one. Under a storm of redeliveries each lookup then carries many keys — the
   * embedded database's cost is mostly per statement (~0.8 ms), ~10 µs per key.
   */
  private lookUp(key: { provider: string; external_id: string }): Promise<EventSummary | null> {
    const done = deferred<EventSummary | null>();
    this.lookups.push({ key, done });
    if (!this.lookingUp) {
      this.lookingUp = true;
      setImmediate(() => void this.runLookups());
    }
    return done.promise;
  }

  private async runLookups(): Promise<void> {
    while (this.lookups.length > 0) {
      const batch = this.lookups.splice(0, MAX_LOOKUP_KEYS);
      this.keyLookups += batch.length;
      try {
        const found = await this.target.eventsByKeys(batch.map((item) => item.key));
        const byKey = new Map(found.map((event) => [keyOf(event.provider, event.external_id), event]));
        for (const item of batch) item.done.resolve(byKey.get(keyOf(item.key.provider, item.key.external_id)) ?? null);
      } catch (error) {
        const failure = new SwitchboardError('storage_unavailable', `checking for a redelivery failed: ${(error as Error).message}`, { cause: error });
        for (const item of batch) item.done.reject(failure);
      }
    }
    this.lookingUp = false;
  }

  /**
   * Saved at a clean stop, with every applied key in it (written aside, then renamed: a crash
   * mid-write leaves the previous file or none, never half of one).
   */
  private async saveFilter(): Promise<void> {
    if (!this.filter || this.filterLoading) return;
    try {
      // Every key up to the highest id the load read, and every key applied since.
      await writeFile(`${this.filterPath}.tmp`, this.filter.serialize(Math.max(this.filterThroughId, this.appliedId)), { mode: 0o600 });
      await rename(`${this.filterPath}.tmp`, this.filterPath);
    } catch (error) {
      this.logger.warn(`journal: could not save the redelivery filter (${(error as Error).message}); the next start reads the keys from the database`);
    }
  }

  /**
   * The redelivery filter: the one saved at the last clean stop plus the keys stored since, or
   * every stored key — in id order, while deliveries go on (they are checked against the
   * database meanwhile). Keys applied during the load are either read by it or added at append
   * time.
   */
  private async loadFilter(fresh = false): Promise<void> {
    try {
      const saved = fresh ? null : KeyFilter.deserialize(await readFile(this.filterPath).catch(() => Buffer.alloc(0)));
      const estimate = await this.target.estimatedEventCount();
      const usable = saved && !saved.filter.saturated && saved.filter.capacity >= estimate ? saved : null;
      const filter = usable?.filter ?? new KeyFilter(Math.max(1 << 20, estimate * 2));
      const source = usable ? 'file' : 'database';
      let after = usable?.throughId ?? 0;
      for (;;) {
        if (this.closing) return;
        const keys = await this.target.eventKeysAfter(after, KEY_SCAN_ROWS);
        for (const key of keys) filter.add(keyOf(key.provider, key.external_id)!);
        if (keys.length > 0) after = keys[keys.length - 1]!.id;
        if (keys.length < KEY_SCAN_ROWS) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
      for (const key of this.keysDuringLoad) filter.add(key);
      this.filter = filter;
      this.filterSource = source;
      this.filterThroughId = after;
    } catch (error) {
      this.logger.warn(`journal: loading the redelivery filter failed (${(error as Error).message}); every delivery with an id is checked in the database`);
    } finally {
      this.keysDuringLoad = [];
      this.filterLoading = null;
    }
  }
}

function isRowError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && ROW_ERROR_CLASSES.some((prefix) => code.startsWith(prefix));
}
