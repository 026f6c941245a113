import { rename } from 'node:fs/promises';
import type { EventSummary } from '../../shared/events.js';
import { SwitchboardError } from '../errors.js';
import { readPrivateFile, writePrivateFile } from '../private-files.js';
import type { Logger } from '../logger.js';
import { deferred, keyOf, type Deferred, type Entry, type JournalInsert } from './entry.js';
import { KeyFilter } from './key-filter.js';

/**
 * Exact dedupe of redeliveries (the same (provider, external_id) again) across the journal and
 * the database, without a database lookup per delivery:
 * - a key still in the journal (appended, not yet applied) is found in memory;
 * - so is one of the newest STORED_KEYS stored ones — a storm of redeliveries (a provider
 *   retrying, a sender stuck on one id) is answered without touching the database;
 * - otherwise a Bloom filter of the database's keys says "new" (no query) or "maybe": then one
 *   batched index lookup, during which the key is held so a concurrent redelivery waits for it.
 */

/** Stored keys remembered for redeliveries (~300 bytes each). */
const STORED_KEYS = 20_000;
/** Keys per redelivery lookup (two text arrays as parameters). */
const MAX_LOOKUP_KEYS = 1_000;
/** Keys read per statement while the filter loads: small, so reads and applied batches interleave. */
const KEY_SCAN_ROWS = 2_000;
const VISIBLE = Promise.resolve(true);

/** What the dedupe asks of the database (the store's journal side). */
export interface KeySource {
  eventsByKeys(keys: readonly { provider: string; external_id: string }[]): Promise<EventSummary[]>;
  /** Keys of stored events with id > afterId, in id order (the Bloom filter's load). */
  eventKeysAfter(afterId: number, limit: number): Promise<{ id: number; provider: string; external_id: string }[]>;
  estimatedEventCount(): Promise<number>;
}

export class Redeliveries {
  /** Appended and not yet applied, by key. */
  private readonly pending = new Map<string, Entry>();
  /**
   * Keys of events applied or found stored lately (the newest STORED_KEYS), kept in a ring of
   * what was remembered (a Map's own first key is O(deleted entries) to reach once many were
   * deleted — ~11 µs per delivery here).
   */
  private readonly stored = new Map<string, EventSummary>();
  private readonly storedRing: ({ key: string; event: EventSummary } | undefined)[] = [];
  private storedNext = 0;
  /** Keys being decided (looked up, or appended after a lookup): a concurrent redelivery waits for the decision. */
  private readonly deciding = new Map<string, Promise<JournalInsert>>();
  private lookups: { key: { provider: string; external_id: string }; done: Deferred<EventSummary | null> }[] = [];
  private lookingUp = false;
  /** Keys looked up in the database so far (tests). */
  keyLookups = 0;
  private filter: KeyFilter | null = null;
  private loading: Promise<void> | null = null;
  /** Keys appended while the filter loads (added to it when the load ends). */
  private keysDuringLoad: string[] = [];
  /** Where the filter came from (tests; null while it loads). */
  filterSource: 'file' | 'database' | null = null;
  /** The highest event id the filter's load read (keys applied later are added as they are appended). */
  private filterThroughId = 0;

  constructor(
    private readonly source: KeySource,
    private readonly logger: Logger,
    private readonly filterPath: string,
    /** Stop reading keys (the journal is closing). */
    private readonly closing: () => boolean,
  ) {}

  /**
   * The first event with this key, if this is a redelivery; otherwise `append()` stores it as
   * the first — exactly once, however many copies arrive at the same moment.
   */
  async firstOr(key: string, identity: { provider: string; external_id: string }, append: () => Promise<JournalInsert>): Promise<JournalInsert> {
    for (;;) {
      const pending = this.pending.get(key);
      if (pending) return { event: pending.summary, duplicate: true, visible: pending.visible.promise };
      const stored = this.stored.get(key);
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
    if (this.filter && !this.loading && !this.filter.mayHave(key)) return append();
    const decision = this.lookUp(identity).then((found) => {
      if (!found) return append();
      this.remember(key, found);
      return { event: found, duplicate: true, visible: VISIBLE };
    });
    this.deciding.set(key, decision);
    const forget = () => {
      if (this.deciding.get(key) === decision) this.deciding.delete(key);
    };
    decision.then(forget, forget);
    return decision;
  }

  /** `entry` (with a key) is on its way into the journal: a redelivery of it is a duplicate from now on. */
  appended(entry: Entry & { key: string }): void {
    this.pending.set(entry.key, entry);
    this.filter?.add(entry.key);
    if (this.loading) this.keysDuringLoad.push(entry.key);
    else if (this.filter?.saturated) this.loading = this.loadFilter(true);
  }

  /** `entry` left the journal: stored (remembered as stored), or failed to append or dropped (forgotten). */
  settled(entry: Entry, stored: boolean): void {
    if (!entry.key || this.pending.get(entry.key) !== entry) return;
    this.pending.delete(entry.key);
    if (stored) this.remember(entry.key, entry.summary);
  }

  /**
   * The store deleted events (retention, clear): redeliveries are checked in the database again
   * rather than answered from memory, so one whose first copy is gone is stored anew.
   */
  forgetStored(): void {
    this.stored.clear();
    this.storedRing.length = 0;
    this.storedNext = 0;
  }

  private remember(key: string, event: EventSummary): void {
    const oldest = this.storedRing[this.storedNext];
    if (oldest && this.stored.get(oldest.key) === oldest.event) this.stored.delete(oldest.key);
    this.storedRing[this.storedNext] = { key, event };
    this.storedNext = (this.storedNext + 1) % STORED_KEYS;
    this.stored.set(key, event);
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
        const found = await this.source.eventsByKeys(batch.map((item) => item.key));
        const byKey = new Map(found.map((event) => [keyOf(event.provider, event.external_id), event]));
        for (const item of batch) item.done.resolve(byKey.get(keyOf(item.key.provider, item.key.external_id)) ?? null);
      } catch (error) {
        const failure = new SwitchboardError('storage_unavailable', `checking for a redelivery failed: ${(error as Error).message}`, { cause: error });
        for (const item of batch) item.done.reject(failure);
      }
    }
    this.lookingUp = false;
  }

  /** Starts loading the filter (at open). */
  startLoading(): void {
    this.loading = this.loadFilter();
  }

  /** Resolves once the redelivery filter is loaded (tests and benchmarks). */
  async loaded(): Promise<void> {
    while (this.loading) await this.loading.catch(() => {});
  }

  /**
   * Saved at a clean stop, with every applied key in it (written aside, then renamed: a crash
   * mid-write leaves the previous file or none, never half of one).
   */
  async save(appliedId: number): Promise<void> {
    await this.loaded();
    if (!this.filter) return;
    try {
      // Every key up to the highest id the load read, and every key applied since.
      // Never through a symbolic link planted at keys.bloom.tmp (issue #22.4): rename replaces a link, it does not follow it.
      await writePrivateFile(`${this.filterPath}.tmp`, this.filter.serialize(Math.max(this.filterThroughId, appliedId)));
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
      const saved = fresh ? null : KeyFilter.deserialize(await readPrivateFile(this.filterPath).catch(() => Buffer.alloc(0)));
      const estimate = await this.source.estimatedEventCount();
      const usable = saved && !saved.filter.saturated && saved.filter.capacity >= estimate ? saved : null;
      const filter = usable?.filter ?? new KeyFilter(Math.max(1 << 20, estimate * 2));
      const source = usable ? 'file' : 'database';
      let after = usable?.throughId ?? 0;
      for (;;) {
        if (this.closing()) return;
        const keys = await this.source.eventKeysAfter(after, KEY_SCAN_ROWS);
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
      this.loading = null;
    }
  }
}
