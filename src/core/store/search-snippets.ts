import type { SqlClient } from './sql-client.js';

/**
 * A short excerpt around a search's match, for the rows of one page only (issue #26.9): the
 * page's events are read by primary key and the match is found where the search looks for it
 * (the payload's first SEARCH_PAYLOAD_BYTES, ASCII case-insensitively, other bytes exactly).
 * `position()` on the bytes as they are is tried first; only when the case differs are the
 * first bytes lowercased (encode → lower → decode: ASCII letters only, the byte offsets kept).
 * An event that matched by its type alone gets no snippet.
 */

export const SNIPPET_BEFORE_BYTES = 40;
export const SNIPPET_AFTER_BYTES = 80;
const SEARCH_PAYLOAD_BYTES = 64 * 1024;

export function searchSnippetStep(ids: readonly number[], search: string): { sql: string; params: unknown[] } {
  const asTyped = Buffer.from(search, 'utf8');
  const lowered = Buffer.from(search.replace(/[A-Z]+/g, (run) => run.toLowerCase()), 'utf8');
  return {
    sql: `SELECT found.id, found.at, substring(found.payload from greatest(found.at - ${SNIPPET_BEFORE_BYTES}, 1) for ${SNIPPET_BEFORE_BYTES + SNIPPET_AFTER_BYTES} + octet_length($2::bytea)) AS excerpt,
            found.at > ${SNIPPET_BEFORE_BYTES + 1} AS cut_before, found.at + octet_length($2::bytea) + ${SNIPPET_AFTER_BYTES} <= found.payload_size AS cut_after
          FROM (SELECT events.id, events.payload, events.payload_size,
                  COALESCE(NULLIF(position($2::bytea in substring(events.payload from 1 for ${SEARCH_PAYLOAD_BYTES})), 0),
                           NULLIF(position($3::bytea in decode(lower(encode(substring(events.payload from 1 for ${SEARCH_PAYLOAD_BYTES}), 'escape')), 'escape')), 0)) AS at
                FROM events WHERE events.id = ANY($1::bigint[])) AS found
          WHERE found.at IS NOT NULL`,
    params: [ids, asTyped, lowered],
  };
}

/** id → excerpt (text; bytes that are not UTF-8, or a character cut at an edge, shown as �). */
export async function readSearchSnippets(db: SqlClient, ids: readonly number[], search: string): Promise<Map<number, string>> {
  if (ids.length === 0 || search.trim() === '') return new Map();
  const step = searchSnippetStep(ids, search);
  const rows = await db.query<{ id: number | string; excerpt: Uint8Array; cut_before: boolean; cut_after: boolean }>(step.sql, step.params);
  const decoder = new TextDecoder('utf-8', { fatal: false });
  return new Map(
    rows.map((row) => {
      // A multi-byte character cut at either edge decodes to U+FFFD there: drop it.
      const text = decoder
        .decode(row.excerpt)
        .replace(/^\uFFFD+|\uFFFD+$/g, '')
        .replace(/\s+/g, ' ');
      return [Number(row.id), `${row.cut_before ? '…' : ''}${text}${row.cut_after ? '…' : ''}`];
    }),
  );
}
