import type { Logger } from '../logger.js';
import type { EventStore } from './event-store.js';

/**
 * Fills event_search (migrations/0005) off the write path: trigram indexing costs about four
 * times the rest of an insert on the embedded database, so deliveries are stored without it and
 * this copies their search text in batches, in the idle time of the receiver and the database.
 *
 * Ingest comes first: while deliveries keep arriving (one in the last QUIET_MS) or the journal
 * has events waiting to be applied, the indexer waits — unless it is more than MAX_TAIL events
 * behind, because a search reads the unindexed tail directly and a long tail makes searches
 * slow; then it interleaves one small batch at a time. Idle, it sleeps until woken (an applied
 * batch) or POLL_MS (PostgreSQL: events indexed in their insert statement; this backfills older
 * ones). On these 2-core machines a busy indexer cost the receiver half its throughput
 * (docs/benchmarks.md).
 */

/** Rows copied per statement: ~40 ms of the database's time, so a read or an applied batch never waits long behind it. */
export const SEARCH_INDEX_BATCH_ROWS = 200;
const MAX_TAIL = 50_000;
const QUIET_MS = 250;
const BUSY_WAIT_MS = 100;
const POLL_MS = 5_000;

export interface SearchIndexerOptions {
  logger: Logger;
  /** Events stored or acknowledged but not yet in the database (the journal's lag); 0 if none. */
  ingestBacklog?: () => number;
  /** The highest event id known to be stored or acknowledged. */
  newestId?: () => number;
  /** When the last delivery came, stored or a redelivery (performance.now() ms), if known. */
  lastIngestAt?: () => number;
}

export class SearchIndexer {
  private stopped = false;
  private wakeUp: (() => void) | null = null;
  private running: Promise<void> | null = null;
  private indexedId = 0;
  private failures = 0;

  constructor(
    private readonly store: EventStore,
    private readonly options: SearchIndexerOptions,
  ) {}

  start(): void {
    this.running ??= this.run();
  }

  /** New events are stored: index them when there is time. */
  wake(): void {
    const wake = this.wakeUp;
    this.wakeUp = null;
    wake?.();
  }

  /** How far the index reaches (for tests and the benchmark). */
  get indexedThrough(): number {
    return this.indexedId;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.running;
  }

  /** Indexes until nothing is left (tests and the benchmark; the loop does this by itself). */
  async catchUp(): Promise<void> {
    for (;;) {
      const { indexed, indexedId } = await this.store.indexSearchBatch();
      this.indexedId = indexedId;
      if (indexed < SEARCH_INDEX_BATCH_ROWS) return;
    }
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const backlog = this.options.ingestBacklog?.() ?? 0;
      const behind = (this.options.newestId?.() ?? 0) - this.indexedId;
      const ingesting = performance.now() - (this.options.lastIngestAt?.() ?? -Infinity) < QUIET_MS;
      if ((backlog > 0 || ingesting) && behind < MAX_TAIL) {
        await this.sleep(BUSY_WAIT_MS);
        continue;
      }
      let indexed: number;
      try {
        const result = await this.store.indexSearchBatch();
        indexed = result.indexed;
        this.indexedId = result.indexedId;
        this.failures = 0;
      } catch (error) {
        if (this.stopped) return;
        this.failures++;
        if (this.failures === 1) this.options.logger.warn(`search index: ${(error as Error).message}; searches read unindexed events directly meanwhile`);
        await this.sleep(Math.min(POLL_MS, 100 * 2 ** this.failures));
        continue;
      }
      if (indexed < SEARCH_INDEX_BATCH_ROWS) await this.sleep(POLL_MS);
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
