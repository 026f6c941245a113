import type { Logger } from '../logger.js';
import { searchDoc } from './columns.js';
import { BackgroundLoop } from './background-loop.js';
import { SliceSize, type DatabaseLanes } from './foreground.js';
import type { SqlClient } from './sql-client.js';

/**
 * Fills event_search off the write path: trigram indexing costs about four times the rest of an
 * insert on the embedded database, so deliveries are stored without it and this copies their
 * search text in the database's idle time, one slice at a time on the background lane
 * (foreground.ts, DESIGN §17): each slice one statement of ≤ ~4 ms, sent only when no read,
 * applier batch or replay row is in flight, so a read waits for at most the slice in progress.
 *
 * Two kinds of work, new events first:
 * - the tail: events above search_state.indexed_id (new since the last slice), in id order;
 * - the backfill: every stored event below search_state's floor, newest first (after
 *   migrations/0007 the whole log is indexed again; newest first, so the events a developer
 *   searches for are indexed within seconds). A search reads what is not indexed yet directly.
 *
 * The trigram index's own cost (embedded database): GIN's fast update puts new entries in a
 * pending list and merges it into the index inside whichever insert fills it — one atomic step of
 * 35–190 ms at 1M events that no slice size can avoid, and the cause of reads' 50–100 ms p99
 * during a backfill (docs/benchmarks.md). So while someone is using the database (a foreground
 * statement in the last IDLE_MS) the indexes take their entries directly (`fastupdate = off`:
 * ~1 ms per event, slices of a few events, ~1,000 events a second); once nobody has for IDLE_MS
 * they go back to fast update, ~3× faster, merges and all (setSearchIndexMode, `mode`). The first
 * read after such a pause may meet a merge in progress; every later one meets only slices.
 *
 * Ingest comes first (background-loop.ts): while deliveries keep arriving or the journal has
 * events waiting to be applied, the indexer waits — unless it is more than MAX_TAIL events
 * behind, because a search reads the unindexed tail directly and a long tail makes searches
 * slow; then its slices go in between the foreground's statements (urgent). Idle, it sleeps
 * until woken (an applied batch) or POLL_MS (PostgreSQL: events indexed in their insert
 * statement; this backfills older ones).
 */

/** The most rows one statement indexes (tests and catchUp use it as the batch). */
export const SEARCH_INDEX_BATCH_ROWS = 200;
const MAX_TAIL = 50_000;
const POLL_MS = 5_000;
/** The foreground idle this long: nobody is waiting, the indexes take fast update (see above). */
export const IDLE_MS = 2_000;
const SEARCH_INDEXES = ['event_search_doc_trgm_idx', 'event_search_type_trgm_idx'];

/** How the search indexes take new entries: `direct` (fastupdate off) while someone uses the database, `fast` when idle. */
export type SearchIndexMode = 'direct' | 'fast';

export interface SearchIndexerOptions {
  logger: Logger;
  /**
   * Switch the indexes between direct and fast update by how busy the foreground is (the
   * embedded database, where one statement holds every other back); off: leave them as they are.
   */
  adaptIndexMode?: boolean;
  /** Events stored or acknowledged but not yet in the database (the journal's lag); 0 if none. */
  ingestBacklog?: () => number;
  /** The highest event id known to be stored or acknowledged. */
  newestId?: () => number;
  /** When the last delivery came, stored or a redelivery (performance.now() ms), if known. */
  lastIngestAt?: () => number;
}

export class SearchIndexer {
  private readonly loop: BackgroundLoop;
  private indexedId = 0;
  /** Until a backfill step says otherwise, one may be under way (migrations/0007). */
  private backfillPending = true;
  /** The last tail step came back short: nothing new since, unless woken. */
  private tailCaughtUp = false;
  /** Slice sizes per mode: an event costs ~4× more with direct update. */
  private readonly slices: Record<SearchIndexMode, { tail: SliceSize; backfill: SliceSize }> = {
    // ~0.8 ms a statement and ~0.7–2 ms an event: a slice of one would spend half its time on itself.
    direct: { tail: new SliceSize({ initialRows: 3, minRows: 2, maxRows: SEARCH_INDEX_BATCH_ROWS, targetMs: 5 }), backfill: new SliceSize({ initialRows: 3, minRows: 2, maxRows: SEARCH_INDEX_BATCH_ROWS, targetMs: 5 }) },
    fast: { tail: new SliceSize({ initialRows: 20, maxRows: SEARCH_INDEX_BATCH_ROWS }), backfill: new SliceSize({ initialRows: 20, maxRows: SEARCH_INDEX_BATCH_ROWS }) },
  };
  /** What the indexes are set to; null until the first slice has looked (tuneSearchIndex). */
  private indexMode: SearchIndexMode | null = null;
  /** Switches between the modes so far (tests, the benchmark). */
  modeSwitches = 0;

  constructor(
    private readonly lanes: DatabaseLanes,
    private readonly options: SearchIndexerOptions,
  ) {
    this.loop = new BackgroundLoop({
      logger: options.logger,
      ...(options.ingestBacklog ? { ingestBacklog: options.ingestBacklog } : {}),
      ...(options.lastIngestAt ? { lastIngestAt: options.lastIngestAt } : {}),
      behind: () => (this.options.newestId?.() ?? 0) - this.indexedId,
      maxBehind: MAX_TAIL,
      pollMs: POLL_MS,
      step: (urgent) => this.slice(undefined, urgent),
      failed: (error) => `search index: ${error.message}; searches read unindexed events directly meanwhile`,
    });
  }

  start(): void {
    this.loop.start();
  }

  /** New events are stored: index them when there is time. */
  wake(): void {
    this.tailCaughtUp = false;
    this.loop.wake();
  }

  /** How far the tail index reaches (for tests and the benchmark). */
  get indexedThrough(): number {
    return this.indexedId;
  }

  /** How the indexes take entries now (tests, the benchmark); null before the first slice. */
  get mode(): SearchIndexMode | null {
    return this.indexMode;
  }

  /** Whether older events still wait for the backfill (tests, the benchmark). */
  get backfilling(): boolean {
    return this.backfillPending;
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Indexes until nothing is left, tail and backfill (tests and the benchmark; the loop does this by itself). */
  async catchUp(): Promise<void> {
    while (!(await this.slice(SEARCH_INDEX_BATCH_ROWS, true, 'fast')).done) {
      // next slice
    }
  }

  /**
   * One slice: the tail if there is one, else the backfill. `done` once neither has anything left.
   * `rows`: how many to take (default: what the slice sizes say fits in ~4 ms).
   */
  private async slice(rows: number | undefined, urgent: boolean, force?: SearchIndexMode): Promise<{ done: boolean }> {
    const newest = this.options.newestId?.();
    const tail = !this.tailCaughtUp || (newest !== undefined && newest > this.indexedId) || !this.backfillPending;
    // Decided when the slice runs (the lane runs it once the foreground is idle), by how long ago
    // the foreground's last statement ended.
    const mode = (): SearchIndexMode => force ?? (!this.options.adaptIndexMode || this.lanes.quietFor() >= IDLE_MS ? 'fast' : 'direct');
    return this.lanes.background(
      async (db) => {
        const wanted = mode();
        if (this.options.adaptIndexMode && this.indexMode !== wanted) {
          await setSearchIndexMode(db, wanted);
          if (this.indexMode !== null) this.modeSwitches++;
          this.indexMode = wanted;
          return { done: false }; // the switch is this slice
        }
        const size = this.slices[wanted][tail ? 'tail' : 'backfill'];
        const take = rows ?? size.rows;
        const started = performance.now();
        if (tail) {
          const step = await indexSearchBatch(db, take);
          size.record(step.indexed, performance.now() - started);
          this.indexedId = step.indexedId;
          this.tailCaughtUp = step.indexed < take;
          return { done: this.tailCaughtUp && !this.backfillPending };
        }
        const step = await backfillSearchBatch(db, take);
        size.record(step.indexed, performance.now() - started);
        this.backfillPending = step.pending;
        return { done: !step.pending };
      },
      // Labelled once done, by the mode it ran in.
      { urgent, label: () => `search index: ${tail ? 'new events' : 'backfill'}${this.indexMode ? `, ${this.indexMode}` : ''}` },
    );
  }
}

/**
 * Sets the search indexes' `fastupdate` (direct: off). Switching to direct leaves what is pending
 * where it is (a search reads it; the next fast-update merge takes it in).
 */
export async function setSearchIndexMode(db: SqlClient, mode: SearchIndexMode): Promise<void> {
  await db.exec(SEARCH_INDEXES.map((name) => `ALTER INDEX ${name} SET (fastupdate = ${mode === 'fast' ? 'on' : 'off'});`).join('\n'));
}

/** What the search indexes are set to now (tests). */
export async function searchIndexMode(db: SqlClient): Promise<SearchIndexMode> {
  const rows = await db.query<{ reloptions: string[] | null }>(`SELECT reloptions FROM pg_class WHERE relname = $1`, [SEARCH_INDEXES[0]]);
  return rows[0]?.reloptions?.includes('fastupdate=off') ? 'direct' : 'fast';
}

/**
 * The tail's step: copies the search text of the next `limit` events past search_state.indexed_id
 * into event_search and moves the mark, in one statement. Resolves to how many it indexed and the mark.
 */
export async function indexSearchBatch(db: SqlClient, limit = SEARCH_INDEX_BATCH_ROWS): Promise<{ indexed: number; indexedId: number }> {
  const rows = await db.query<{ n: number | string; mark: number | string | null }>(
    `WITH src AS (
       SELECT events.id, ${searchDoc('events')} AS doc, events.event_type FROM events
       WHERE events.id > (SELECT search_state.indexed_id FROM search_state) ORDER BY events.id LIMIT $1
     ), ins AS (
       INSERT INTO event_search (event_id, doc, event_type) SELECT src.id, src.doc, src.event_type FROM src ON CONFLICT DO NOTHING
     ), moved AS (
       UPDATE search_state SET indexed_id = GREATEST(search_state.indexed_id, (SELECT max(src.id) FROM src))
       WHERE EXISTS (SELECT 1 FROM src) RETURNING indexed_id
     )
     SELECT (SELECT count(*) FROM src) AS n,
            COALESCE((SELECT indexed_id FROM moved), (SELECT search_state.indexed_id FROM search_state)) AS mark`,
    [limit],
  );
  return { indexed: Number(rows[0]?.n ?? 0), indexedId: Number(rows[0]?.mark ?? 0) };
}

/**
 * The backfill's step: the `limit` newest events below search_state's floor (through the
 * (received_at, id) index, backwards from the floor), their search text copied and the floor
 * moved down to the last of them — or cleared once fewer than `limit` were left. `pending`: whether
 * a backfill is still under way after this step.
 */
export async function backfillSearchBatch(db: SqlClient, limit: number): Promise<{ indexed: number; pending: boolean }> {
  const rows = await db.query<{ n: number | string; pending: boolean | null }>(
    `WITH src AS MATERIALIZED (
       SELECT events.id, events.received_at, ${searchDoc('events')} AS doc, events.event_type FROM events
       WHERE (events.received_at, events.id) < ((SELECT search_state.floor_received_at FROM search_state), (SELECT search_state.floor_id FROM search_state))
       ORDER BY events.received_at DESC, events.id DESC LIMIT $1
     ), ins AS (
       INSERT INTO event_search (event_id, doc, event_type) SELECT src.id, src.doc, src.event_type FROM src ON CONFLICT DO NOTHING
     ), last AS (
       SELECT src.received_at, src.id FROM src ORDER BY src.received_at, src.id LIMIT 1
     ), counted AS (
       SELECT count(*) AS n FROM src
     ), moved AS (
       UPDATE search_state SET
         floor_received_at = CASE WHEN counted.n < $1 THEN NULL ELSE (SELECT last.received_at FROM last) END,
         floor_id = CASE WHEN counted.n < $1 THEN NULL ELSE (SELECT last.id FROM last) END,
         backfill_rows = CASE WHEN counted.n < $1 THEN 0 ELSE GREATEST(0, search_state.backfill_rows - counted.n) END
       FROM counted WHERE search_state.floor_received_at IS NOT NULL
       RETURNING search_state.floor_received_at IS NOT NULL AS pending
     )
     SELECT (SELECT n FROM counted) AS n, (SELECT pending FROM moved) AS pending`,
    [limit],
  );
  return { indexed: Number(rows[0]?.n ?? 0), pending: rows[0]?.pending === true };
}
