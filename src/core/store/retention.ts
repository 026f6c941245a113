import type { Logger } from '../logger.js';
import { deleteInBatches } from './batched-delete.js';
import { SliceSize } from './foreground.js';
import type { StoreContext } from './context.js';
import type { Cursor } from './cursor.js';
import { waitForQuiet } from './quiet.js';
import { RETENTION_BATCH_ROWS, type Rejections } from './rejections.js';
import { EVENT_ID_SPAN, nthNewestStep, retentionStatements } from './sql-builders.js';
import type { RetentionPolicy, RetentionResult } from './types.js';

/**
 * Retention (DESIGN §5): events older than max_age_days or beyond max_rows, rejections likewise,
 * deleted in bounded batches; and on the embedded database, which has no autovacuum, the space
 * of deleted rows given back with VACUUM once reads pause.
 */

/** The cut-off row for max_rows is found in steps of at most this many index entries, each a background slice. */
const RETENTION_SEEK_ROWS = 50_000;

export class Retention {
  constructor(
    private readonly ctx: StoreContext,
    private readonly rejections: Rejections,
  ) {}

  /**
   * Events older than max_age_days, then the oldest beyond max_rows; rejections older than
   * max_age_days, then beyond max_rejections. At most `batchRows` rows per statement, each a slice
   * of the background lane, so ingest and queries keep being served meanwhile (DESIGN §17).
   */
  async apply(policy: RetentionPolicy, batchRows = RETENTION_BATCH_ROWS): Promise<RetentionResult> {
    const maxAgeS = policy.max_age_days * 86_400;
    let events = await deleteInBatches(this.ctx, (rows) => retentionStatements(rows).eventsByAge, [maxAgeS], batchRows);
    const cut = await this.nthNewest(policy.max_rows);
    if (cut) events += await deleteInBatches(this.ctx, (rows) => retentionStatements(rows).eventsUpTo, [cut.received_at, cut.id], batchRows);
    let rejections = await deleteInBatches(this.ctx, (rows) => retentionStatements(rows).rejectionsByAge, [maxAgeS], batchRows);
    rejections += await this.rejections.trim(policy.max_rejections, batchRows);
    return { events, rejections };
  }

  /**
   * The (received_at, id) of the row just past the newest `n` (null when there are at most n),
   * walked through the index in bounded steps rather than one OFFSET n.
   */
  private async nthNewest(n: number): Promise<Cursor | null> {
    // Ids are distinct integers: no more events than the span of them. Within max_rows (the usual
    // case: a log below its limit) nothing is walked — at 1M events that walk was ~1,300 slices
    // every hour to find nothing. Two probes of the primary key.
    const [span] = await this.ctx.lanes.background(
      (db) => db.query<{ n: number | string | null }>(EVENT_ID_SPAN),
      { label: 'retention: span' },
    );
    if (Number(span?.n ?? 0) <= n) return null;
    const seek = new SliceSize({ initialRows: 5_000, minRows: 100, maxRows: RETENTION_SEEK_ROWS });
    let after: Cursor | null = null;
    let remaining = n;
    for (;;) {
      const skip = Math.min(remaining, seek.rows);
      // The row at index `skip` from the newest; after a step, from the row after `after`.
      const step = nthNewestStep(after ? skip - 1 : skip, after);
      const started = performance.now();
      const rows = await this.ctx.lanes.background((db) => db.query<{ received_at: string; id: number | string }>(step.sql, step.params), { label: 'retention: seek' });
      seek.record(skip, performance.now() - started);
      if (!rows[0]) return null;
      after = { received_at: rows[0].received_at, id: Number(rows[0].id) };
      remaining -= skip;
      if (remaining === 0) return after;
    }
  }

  /** Refreshes planner statistics; PGlite never runs autoanalyze (STACK.md). */
  async analyze(): Promise<void> {
    await this.ctx.db.exec('ANALYZE events; ANALYZE rejections; ANALYZE replays;');
  }

  /**
   * Gives the space of deleted rows back for reuse, after retention deleted many. The embedded
   * database has no autovacuum: without a VACUUM the space of a deleted row is never reused, so a
   * log held at max_rows by retention would still grow by every new event, for good
   * (test/core/store/retention-space.test.ts). VACUUM also refreshes the planner's statistics and
   * freezes old rows. On PostgreSQL autovacuum does this; there it is only ANALYZE.
   * Each table's VACUUM holds the database for its duration (up to ~17 s for the first one of a
   * million events): deliveries are still answered from the journal meanwhile; reads wait, for as
   * long as it takes (EventJournal.maintenance), instead of failing as a stuck database.
   */
  async reclaimSpace(): Promise<void> {
    if (this.ctx.db.kind !== 'pglite') return this.analyze();
    const vacuum = async () => {
      // One statement each: VACUUM cannot run inside a transaction block. The search text is only
      // ever read through its indexes: no statistics to refresh there.
      for (const statement of ['VACUUM (ANALYZE) events', 'VACUUM event_search', 'VACUUM (ANALYZE) rejections', 'VACUUM (ANALYZE) replays']) {
        await this.ctx.db.exec(statement);
      }
    };
    await (this.ctx.journal ? this.ctx.journal.maintenance(vacuum) : vacuum());
  }
}

const HOUR_MS = 60 * 60 * 1000;
/**
 * Past this many deleted rows their space is given back (and the statistics refreshed); and once
 * a day whatever was deleted, which also freezes old rows (Retention.reclaimSpace).
 */
const RECLAIM_AFTER_ROWS = 10_000;
const RECLAIM_EVERY_RUNS = 24;

/**
 * Runs retention hourly (the first run `firstRunMs` after start), reading the policy at each run so
 * a config reload applies. Resolves nothing; returns the stop function.
 */
export function scheduleRetention(
  store: { applyRetention(policy: RetentionPolicy): Promise<RetentionResult>; reclaimSpace(): Promise<void>; readonly lastReadAt: number },
  options: { policy: () => RetentionPolicy; logger: Logger; firstRunMs?: number },
): () => void {
  let running = false;
  let stopped = false;
  let runs = 0;
  const run = () => {
    if (running || stopped) return;
    running = true;
    runs++;
    store
      .applyRetention(options.policy())
      .then(async (deleted) => {
        if (deleted.events > 0 || deleted.rejections > 0) {
          options.logger.info(`retention: deleted ${deleted.events} events and ${deleted.rejections} rejections`);
        }
        if (deleted.events + deleted.rejections >= RECLAIM_AFTER_ROWS || runs % RECLAIM_EVERY_RUNS === 0) {
          // Reads wait while a VACUUM runs (seconds on a large dir): after a pause in them if one
          // comes within half an hour — nobody at the UI, no agent asking — else regardless.
          await waitForQuiet(() => store.lastReadAt, { quietMs: 10_000, maxWaitMs: 30 * 60_000, pollMs: 5_000, stopped: () => stopped });
          if (stopped) return;
          const started = performance.now();
          await store.reclaimSpace();
          options.logger.info(`retention: space of deleted rows reclaimed in ${((performance.now() - started) / 1000).toFixed(1)} s`);
        }
      })
      // A run cut short by a stop is not an error: the rest is deleted at the next start.
      .catch((error: Error) => !stopped && options.logger.error(`retention: ${error.message}`))
      .finally(() => (running = false));
  };
  const first = setTimeout(run, options.firstRunMs ?? 30_000);
  const hourly = setInterval(run, HOUR_MS);
  first.unref();
  hourly.unref();
  return () => {
    stopped = true;
    clearTimeout(first);
    clearInterval(hourly);
  };
}
