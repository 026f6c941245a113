import type { StoreContext } from './context.js';
import { SliceSize } from './foreground.js';

/**
 * Runs a bounded DELETE (the statement for `rows` rows, answering `n`, rows deleted) until it
 * deletes fewer rows than it was given, one slice at a time on the background lane (DESIGN §17):
 * one DELETE of 500k rows holds the single-threaded embedded database for seconds (STACK.md); a
 * slice sized to ~4 ms keeps a read's wait behind it as short. Resolves to the rows deleted.
 */
export async function deleteInBatches(ctx: StoreContext, statement: (rows: number) => string, params: unknown[], maxRows: number): Promise<number> {
  const size = new SliceSize({ initialRows: Math.min(100, maxRows), maxRows });
  let total = 0;
  for (;;) {
    const rows = size.rows;
    const deleted = await ctx.lanes.background(async (db) => {
      // Before and after: a redelivery answered from the journal's memory meanwhile is no staler
      // than one answered by a lookup racing the same DELETE.
      ctx.journal?.forgetStoredKeys();
      const started = performance.now();
      try {
        const answer = await db.query<{ n: number | string }>(statement(rows), params);
        const n = Number(answer[0]?.n ?? 0);
        size.record(n, performance.now() - started);
        return n;
      } finally {
        ctx.journal?.forgetStoredKeys();
      }
    }, { label: 'retention: delete' });
    total += deleted;
    if (deleted < rows) return total;
  }
}
