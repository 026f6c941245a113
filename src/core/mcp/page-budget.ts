import { encodeCursor } from '../store/cursor.js';
import type { Page } from '../store/types.js';

/**
 * What one page of a list tool may cost in JSON characters. A page is sent twice (structuredContent
 * and its text copy), so 40 KiB keeps a whole answer near 100 KB however long its event types or
 * delivery ids are; `limit` alone bounds rows, not bytes.
 */
export const MAX_PAGE_JSON_CHARS = 40 * 1024;

/**
 * The rows of `page` that fit the budget (always at least one). When rows are left out, the
 * cursor continues right after the last row returned, so nothing is skipped.
 */
export function fitPage<T extends { id: number; received_at: string }>(page: Page<T>, budget = MAX_PAGE_JSON_CHARS): Page<T> {
  let size = 0;
  for (let index = 0; index < page.items.length; index++) {
    size += JSON.stringify(page.items[index]).length + 1;
    if (size > budget && index > 0) {
      const last = page.items[index - 1]!;
      return { items: page.items.slice(0, index), next_cursor: encodeCursor({ received_at: last.received_at, id: last.id }) };
    }
  }
  return page;
}
