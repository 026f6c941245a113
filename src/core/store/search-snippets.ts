import { SEARCH_WINDOW_BYTES } from './search.js';
import type { SqlClient } from './sql-client.js';

/**
 * A short excerpt around a search's match, for the rows of one page only (issue #26.9): the
 * page's events are read by primary key, and the match is found where the search looks for it —
 * the payload's text (switchboard_payload_text, migrations/0007), lowercased — with a literal
 * regular expression, whose time is linear in the text whatever the search (a position() of a long
 * search over a repetitive text costs text × search: issue #22). The excerpt is the text as it
 * is, not lowercased. At most SEARCH_WINDOW_BYTES of payload text are looked through, newest rows
 * first, so one answer's excerpts are bounded like a search's statements. An event that matched
 * by its type alone gets no excerpt.
 */

export const SNIPPET_BEFORE_CHARS = 40;
export const SNIPPET_AFTER_CHARS = 80;

export function searchSnippetStep(ids: readonly number[], search: string): { sql: string; params: unknown[] } {
  return {
    sql: `SELECT found.id,
                 substring(found.text from greatest(found.at - ${SNIPPET_BEFORE_CHARS}, 1) for ${SNIPPET_BEFORE_CHARS + SNIPPET_AFTER_CHARS} + length($2)) AS excerpt,
                 found.at > ${SNIPPET_BEFORE_CHARS + 1} AS cut_before,
                 found.at + length($2) + ${SNIPPET_AFTER_CHARS} <= length(found.text) AS cut_after
          FROM (
            SELECT page.id, text.value AS text, regexp_instr(lower(text.value COLLATE "default"), '***=' || lower($2)) AS at
            FROM (
              SELECT events.id, events.payload,
                     sum(least(events.payload_size, 65536)) OVER (ORDER BY events.received_at DESC, events.id DESC) - least(events.payload_size, 65536) AS before
              FROM events WHERE events.id = ANY($1::bigint[])
            ) AS page CROSS JOIN LATERAL (SELECT switchboard_payload_text(page.payload) AS value) AS text
            WHERE page.before < $3
          ) AS found
          WHERE found.at > 0`,
    params: [ids, search.replaceAll('\u0000', ''), SEARCH_WINDOW_BYTES],
  };
}

/** id → excerpt, whitespace folded, `…` where it was cut. */
export async function readSearchSnippets(db: SqlClient, ids: readonly number[], search: string): Promise<Map<number, string>> {
  if (ids.length === 0 || search.trim() === '') return new Map();
  const step = searchSnippetStep(ids, search);
  const rows = await db.query<{ id: number | string; excerpt: string; cut_before: boolean; cut_after: boolean }>(step.sql, step.params);
  return new Map(rows.map((row) => [Number(row.id), `${row.cut_before ? '…' : ''}${row.excerpt.replace(/\s+/g, ' ')}${row.cut_after ? '…' : ''}`]));
}
