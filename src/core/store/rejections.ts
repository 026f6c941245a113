import type { Rejection } from '../../shared/events.js';
import { deleteInBatches } from './batched-delete.js';
import { REJECTION_COLUMNS, toRejection, type RejectionRow } from './columns.js';
import type { StoreContext } from './context.js';
import { paginate, rejectionListStep, retentionStatements } from './sql-builders.js';
import { MAX_CONTENT_TYPE_CHARS, MAX_DETAIL_CHARS, MAX_REJECTION_HEADERS_BYTES, storableHeaders, storableOrNull, storableText } from './storable.js';
import type { NewRejection, Page } from './types.js';

/**
 * Deliveries refused before they became events (DESIGN §4): provider, reason, hint, sanitized
 * headers, body size and SHA-256 — never the body. A flood of forged requests must not grow the
 * data dir: the table is trimmed back under its cap every few hundred inserts, not only by the
 * hourly retention job.
 */

export const DEFAULT_MAX_REJECTIONS = 50_000;
/**
 * Retention deletes at most this many rows per statement and yields between statements: one
 * DELETE of 500k rows holds the single-threaded embedded database for seconds (STACK.md), and
 * in-process PGlite holds the event loop too. 5,000 rows took ~1 s on a loaded 2-core machine
 * (docs/benchmarks.md); 1,000 keeps a delivery's worst wait near a fifth of that.
 */
export const RETENTION_BATCH_ROWS = 1_000;
/**
 * Rejections are trimmed after this many inserts (or a tenth of the cap, if smaller), not only by
 * the hourly job; a trim leaves room for that many, so the table never holds more than the cap.
 */
const REJECTION_TRIM_EVERY = 500;
const rejectionTrimEvery = (cap: number) => Math.max(1, Math.min(REJECTION_TRIM_EVERY, Math.floor(cap / 10)));

export class Rejections {
  private sinceTrim = 0;
  private trimming: Promise<void> | null = null;

  /** `cap` is read at each trim, so a config reload applies without a restart. */
  constructor(
    private readonly ctx: StoreContext,
    private readonly cap: () => number,
  ) {}

  /**
   * Stores a rejection with at most MAX_REJECTION_HEADERS_BYTES of headers (`headers_truncated`
   * says when some were cut), trimming the table when a trim is due.
   */
  async insert(rejection: NewRejection): Promise<Rejection> {
    const { headers, truncated } = storableHeaders(rejection.headers, MAX_REJECTION_HEADERS_BYTES);
    const rows = await this.ctx.db.query<RejectionRow>(
      `INSERT INTO rejections (provider, reason, hint, headers, headers_truncated, body_size, body_sha256, source_ip)
       VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8)
       RETURNING ${REJECTION_COLUMNS}`,
      [
        storableText(rejection.provider, MAX_DETAIL_CHARS),
        storableText(rejection.reason, MAX_DETAIL_CHARS),
        storableOrNull(rejection.hint, MAX_DETAIL_CHARS),
        JSON.stringify(headers),
        (rejection.headers_truncated ?? false) || truncated,
        rejection.body_size,
        rejection.body_sha256,
        storableOrNull(rejection.source_ip, MAX_CONTENT_TYPE_CHARS),
      ],
    );
    if (++this.sinceTrim >= rejectionTrimEvery(this.cap()) && !this.trimming) {
      // The request that made the trim due waits for it: a flood pays for its own clean-up, and
      // once every request of a burst is answered the table is back under the cap.
      this.trimming = this.trimWhileDue().finally(() => (this.trimming = null));
      await this.trimming;
    }
    return toRejection(rows[0]!);
  }

  /** Trims until fewer than a trim's worth of rejections arrived meanwhile. */
  private async trimWhileDue(): Promise<void> {
    for (;;) {
      const cap = this.cap();
      if (this.sinceTrim < rejectionTrimEvery(cap)) return;
      this.sinceTrim = 0;
      try {
        await this.trim(cap);
      } catch {
        return; // the hourly job tries again; a failed trim must not fail the rejection's answer
      }
    }
  }

  /**
   * Keeps the newest rejections (by id, which follows arrival) with room for the next trim's
   * worth under `cap`; batched like retention.
   */
  async trim(cap: number, batchRows = RETENTION_BATCH_ROWS): Promise<number> {
    const top = await this.ctx.db.query<{ id: number | string | null }>('SELECT max(id) AS id FROM rejections');
    if (top[0]?.id === null || top[0]?.id === undefined) return 0;
    // Ids are unique, so at most `keep` rows have an id above this bound.
    const keep = cap - rejectionTrimEvery(cap);
    const bound = Number(top[0].id) - keep;
    if (bound <= 0) return 0;
    return deleteInBatches(this.ctx, (rows) => retentionStatements(rows).rejectionsUpToId, [bound], batchRows);
  }

  async list(query: { provider?: string; limit: number; cursor?: string }): Promise<Page<Rejection>> {
    const step = rejectionListStep(query);
    const rows = await this.ctx.db.query<RejectionRow>(step.sql, step.params);
    return paginate(rows.map(toRejection), query.limit);
  }

  /** A trim under way (close waits for it). */
  settled(): Promise<void> {
    return this.trimming ?? Promise.resolve();
  }
}
