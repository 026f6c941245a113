import type { Logger } from '../logger.js';
import { searchDoc } from './columns.js';
import { BackgroundLoop } from './background-loop.js';
import { SliceSize, type DatabaseLanes } from './foreground.js';
import type { BufferPoolSize, SqlClient } from './sql-client.js';

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
 * they go back to fast update, ~3× faster, merges and all (setSearchIndexMode, `mode`).
 *
 * Where the buffer pool can be changed (PGlite in its worker: `pool`), a merge need not be long:
 * its cost is the pool's misses. With `GROW_AT` or more events to index the database is reopened
 * with the large pool (sql-client.ts BufferPoolSize; a recycle, which reads would wait for: at the
 * start, before the ports open — preparePool(), ~0.7 s at 1M — or later after AWAY_MS without a
 * read, the pause VACUUM waits for too). Giving it back takes longer (~5 s at 1M: Postgres writes
 * the pool's dirty pages as it closes), so it too waits for AWAY_MS without a read. On it the indexes take entries directly (~700 events/s
 * at 1M, slices of ~4 ms) until nobody has used the database for AWAY_MS; then fast update takes
 * MERGE_EVERY events at a time and the indexer merges them itself (`gin_clean_pending_list`,
 * ~15 ms at 1M; ~1,900 events/s): no step is longer than a few tens of ms, and only someone back
 * after a pause of AWAY_MS can meet one. Caught up and away, it gives the large pool back. With
 * the small pool the indexes always take entries directly (a small backlog; at 1M ~450 events/s,
 * where a merge would take 55–200 ms). Without `pool` (PGlite on the calling thread: tests),
 * idle means fast update with GIN's own merges after IDLE_MS, as described above.
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
/** This many events or more to index: the large buffer pool, where it can be had. */
export const GROW_AT = 20_000;
/** With the pool under control: nobody has used the database this long (VACUUM's pause, retention.ts). */
export const AWAY_MS = 10_000;
/** With the large pool, fast update takes this many events before the indexer merges them. */
export const MERGE_EVERY = 50;
const SEARCH_INDEXES = ['event_search_doc_trgm_idx', 'event_search_type_trgm_idx'];

/** How the search indexes take new entries: `direct` (fastupdate off) while someone uses the database, `fast` when idle. */
export type SearchIndexMode = 'direct' | 'fast';

/** The embedded database's buffer pool, where it can be changed (pglite-worker.ts). */
export interface BufferPool {
  readonly size: BufferPoolSize;
  /** Reopens the database with the pool of `size` (statements sent meanwhile wait). */
  resize(size: BufferPoolSize): Promise<void>;
}

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
  /** The buffer pool, where it can be changed: large while many events wait (see above). */
  pool?: BufferPool;
  /** Events to index from which the large pool is taken (default GROW_AT; tests). */
  growAt?: number;
  /** The pause after which the pool is changed and merged batches run (default AWAY_MS; tests). */
  awayMs?: number;
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
  /** Events left to the backfill (search_state.backfill_rows); null until read. */
  private backfillRows: number | null = null;
  /** Whether indexedId is the mark (read from search_state, or a tail step has run). */
  private tailKnown = false;
  /** The large pool failed to open once: not asked for again. */
  private poolRefused = false;
  /** Entries fast update took since the indexer's last merge (large pool only). */
  private unmerged = 0;

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
    const idleFor = this.options.pool ? (this.options.awayMs ?? AWAY_MS) : IDLE_MS;
    const mode = (): SearchIndexMode => (!this.options.adaptIndexMode || this.lanes.quietFor() >= idleFor ? 'fast' : 'direct');
    let label = '';
    return this.lanes.background(
      async (db) => {
        const pool = force ? undefined : this.options.pool;
        if (pool) {
          const size = await this.poolWanted(db, pool, false);
          if (size !== pool.size) {
            label = 'buffer pool';
            await this.resizePool(pool, size);
            return { done: false };
          }
        }
        // Fast update's entries so far (only the large pool's loop counts them), merged now:
        // ~15–20 ms with the large pool at 1M. By catchUp() too, or it would never be done.
        if (this.unmerged > 0 && (this.unmerged >= MERGE_EVERY || this.caughtUp())) {
          label = 'merge';
          await mergePendingEntries(db);
          this.unmerged = 0;
          return { done: false };
        }
        // Direct on the small pool, whoever is there: a merge with it is one long step. A forced
        // slice (catchUp) keeps the mode the loop set: were both to switch, each would undo the
        // other's switch, slice after slice, and neither would index an event.
        const wanted = force ? (this.indexMode ?? force) : pool?.size === 'small' ? 'direct' : mode();
        if (this.options.adaptIndexMode && this.indexMode !== wanted) {
          await setSearchIndexMode(db, wanted);
          if (this.indexMode !== null) this.modeSwitches++;
          this.indexMode = wanted;
          return { done: false }; // the switch is this slice
        }
        const size = this.slices[wanted][tail ? 'tail' : 'backfill'];
        // Fast update on the large pool: what the next merge takes, and no more.
        const merged = pool?.size === 'large' && wanted === 'fast';
        const take = merged ? MERGE_EVERY - this.unmerged : (rows ?? size.rows);
        const started = performance.now();
        if (tail) {
          const step = await indexSearchBatch(db, take);
          if (merged) this.unmerged += step.indexed;
          else size.record(step.indexed, performance.now() - started);
          this.indexedId = step.indexedId;
          this.tailKnown = true;
          this.tailCaughtUp = step.indexed < take;
          return { done: this.tailCaughtUp && !this.backfillPending && this.unmerged === 0 };
        }
        const step = await backfillSearchBatch(db, take);
        if (merged) this.unmerged += step.indexed;
        else size.record(step.indexed, performance.now() - started);
        this.backfillPending = step.pending;
        this.backfillRows = step.remaining;
        return { done: !step.pending && this.unmerged === 0 };
      },
      // Labelled once done, by what it did and the mode it ran in.
      { urgent, label: () => `search index: ${label || (tail ? 'new events' : 'backfill')}${label || !this.indexMode ? '' : `, ${this.indexMode}`}` },
    );
  }

  /**
   * At the start, before anyone can read: the large pool if GROW_AT or more events wait to be
   * indexed (so its reopen is part of the start, not a wait for the first reads).
   */
  async preparePool(): Promise<void> {
    const pool = this.options.pool;
    if (!pool) return;
    await this.lanes.background(
      async (db) => {
        const size = await this.poolWanted(db, pool, true);
        if (size !== pool.size) await this.resizePool(pool, size);
      },
      { label: 'search index: buffer pool' },
    );
  }

  private async resizePool(pool: BufferPool, size: BufferPoolSize): Promise<void> {
    const started = performance.now();
    try {
      await pool.resize(size);
    } catch (error) {
      // The database did not open with it (memory?): the small pool, for good, and direct slices.
      this.poolRefused = true;
      this.options.logger.warn(`search index: the database could not take a ${size} buffer pool (${(error as Error).message}); indexing on the small one`);
      if (pool.size !== 'small') await pool.resize('small');
      return;
    }
    const ms = Math.round(performance.now() - started);
    this.options.logger.info(
      size === 'large'
        ? `search index: ${this.left.toLocaleString('en')} events to index; the database took a 128 MB buffer pool until it has caught up (${ms} ms)`
        : `search index: caught up; the database gave its large buffer pool back (${ms} ms)`,
    );
  }

  /** Events known to be left to index: the tail (once its mark is known) and the backfill. */
  get left(): number {
    const tail = this.tailKnown ? Math.max(0, (this.options.newestId?.() ?? 0) - this.indexedId) : 0;
    return tail + (this.backfillPending ? (this.backfillRows ?? 0) : 0);
  }

  private caughtUp(): boolean {
    return this.tailKnown && this.tailCaughtUp && !this.backfillPending;
  }

  /**
   * The pool the next slice should run with: large from `growAt` events left (at the start, or
   * after AWAY_MS without a read: the reopen holds statements back), small again once caught up
   * and away (seen at the loop's next step: when woken, or POLL_MS after it caught up).
   */
  private async poolWanted(db: SqlClient, pool: BufferPool, starting: boolean): Promise<BufferPoolSize> {
    if (this.backfillRows === null) {
      const [state] = await db.query<{ rows: number | string | null; indexed: number | string; pending: boolean }>(
        'SELECT backfill_rows AS rows, indexed_id AS indexed, floor_received_at IS NOT NULL AS pending FROM search_state',
      );
      this.backfillRows = Number(state?.rows ?? 0);
      this.backfillPending = state?.pending === true;
      if (!this.tailKnown) {
        this.indexedId = Number(state?.indexed ?? 0);
        this.tailKnown = true;
      }
    }
    const away = this.lanes.quietFor() >= (this.options.awayMs ?? AWAY_MS);
    if (pool.size === 'small') return !this.poolRefused && this.left >= (this.options.growAt ?? GROW_AT) && (starting || away) ? 'large' : 'small';
    return this.caughtUp() && this.unmerged === 0 && away ? 'small' : 'large';
  }
}

/** Merges what fast update left in the search indexes' pending lists into the indexes. */
export async function mergePendingEntries(db: SqlClient): Promise<void> {
  await db.query(`SELECT ${SEARCH_INDEXES.map((name) => `gin_clean_pending_list('${name}'::regclass)`).join(', ')}`);
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
export async function backfillSearchBatch(db: SqlClient, limit: number): Promise<{ indexed: number; pending: boolean; remaining: number }> {
  const rows = await db.query<{ n: number | string; pending: boolean | null; remaining: number | string | null }>(
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
       RETURNING search_state.floor_received_at IS NOT NULL AS pending, search_state.backfill_rows AS remaining
     )
     SELECT (SELECT n FROM counted) AS n, (SELECT pending FROM moved) AS pending, (SELECT remaining FROM moved) AS remaining`,
    [limit],
  );
  return { indexed: Number(rows[0]?.n ?? 0), pending: rows[0]?.pending === true, remaining: Number(rows[0]?.remaining ?? 0) };
}
