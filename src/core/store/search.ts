import { SwitchboardError } from '../errors.js';
import { SEARCH_PAYLOAD_BYTES, SUMMARY_COLUMNS, NEWEST_FIRST, iso, searchDoc, toSummary, type SummaryRow } from './columns.js';
import type { StoreContext } from './context.js';
import { encodeCursor, type Cursor } from './cursor.js';
import { listConditions, paginate, type Conditions } from './sql-builders.js';
import type { EventQuery, Page, SqlStep } from './types.js';
import type { EventSummary } from '../../shared/events.js';
import { MAX_SEARCH_CHARS } from '../../shared/input.js';

/**
 * Search (DESIGN §5): a case-insensitive substring of the payload's text or of the event type,
 * answered newest first within ~100 ms whatever the words — through the trigram index of
 * event_search where it narrows the search down, else by walking the newest rows in time slices.
 */

/**
 * How a search reads (listEvents, docs/benchmarks.md "Search in time slices"):
 *
 * 1. A first window: the newest rows that pass the other filters, matched against their search
 *    text one by one (~10 µs a row at a million events). A common word fills the page here.
 * 2. If not: the trigram index of event_search, when the first window says it narrows the search
 *    down — few of the newest rows hold all the search's trigrams (rare and absent words, ids).
 *    Each candidate the index gives costs a read, so a search whose trigrams are in most events
 *    (a phrase of common words, `aaaa…` among hex ids) would read them all: at a million
 *    events, seconds.
 * 3. Otherwise the walk: more windows, each continuing where the last stopped, until the page
 *    is full, the events run out, or SEARCH_BUDGET_MS is spent. A walk that runs out of time
 *    answers what it found with a cursor to continue from where it stopped (`searched_back_to`):
 *    every answer comes in milliseconds and stays exact, newest first.
 */
export const SEARCH_WINDOW_MIN_ROWS = 500;
export const searchWindowRows = (limit: number) => Math.max(SEARCH_WINDOW_MIN_ROWS, 3 * (limit + 1));
/**
 * A search's time in the store, all its statements together, before a walk stops and answers
 * what it found: with the answer's way out, a search is answered within ~100 ms.
 */
export const SEARCH_BUDGET_MS = 80;
/**
 * The index is used while it should give fewer candidates than this: each costs a read of its
 * row (~14 µs at a million events), so ~80 ms at most.
 */
export const SEARCH_INDEX_MAX_CANDIDATES = 6_000;
/** An event the search indexer has not reached costs the index step about this many candidates' time. */
const SEARCH_TAIL_ROW_COST = 2;
/** A walk's windows: at least this many rows (a statement's overhead), at most the other. */
export const SEARCH_WALK_MIN_ROWS = 500;
export const SEARCH_WALK_MAX_ROWS = 50_000;
/** Rows a search reads (counting trigrams) before its estimate of the index's candidates is settled. */
export const SEARCH_ESTIMATE_ROWS = 5_000;
/**
 * How many of a search's trigrams a window that estimates (the first SEARCH_ESTIMATE_ROWS rows)
 * looks for in each row to tell what the index would give (each look is a LIKE over the row's text, ~1 µs): spread over the search, so a
 * long one's distinctive parts are among them.
 */
const SEARCH_TRIGRAMS_COUNTED = 8;

/** Tests only: a search's time budget, index threshold and window size in rows (every window). */
export interface SearchTuning {
  budgetMs?: number;
  indexMaxCandidates?: number;
  windowRows?: number;
}

/** What one search window read (searchWindowStep). */
export interface SearchWindowRow extends SummaryRow {
  /** Rows read, rows holding every counted trigram of the search (a first window only), the oldest row read. */
  scanned: number | string;
  /** No rows were left after the window (it read fewer than it asked for, and was not cut by bytes). */
  ended: boolean;
  near: number | string;
  edge_received_at: string | null;
  edge_id: number | string | null;
  /** Events in the table (from the primary key's ends) and those the search indexer has not reached. */
  total: number | string | null;
  unindexed: number | string | null;
  /** The backfill (migrations/0007): about how many rows it has left, and where it stands (null: at the top, or none). */
  backfill_rows: number | string | null;
  backfill_pending: boolean | null;
  floor_received_at: string | null;
  floor_id: number | string | null;
}

/**
 * The most payload text (bytes, each payload counted up to SEARCH_PAYLOAD_BYTES) one search
 * statement matches. Matching is linear in the text but its cost per byte depends on the text and
 * the search (a long search over long runs of one letter costs ~100× a word over JSON), and the
 * embedded database has no statement timeout: so every statement is bounded by the text it reads,
 * not only by rows (issue #22: 500 payloads of 64 KB of `x` held the database for 40 s). 512 KiB
 * are ~430 rows of an ordinary 1.2 KB webhook, read in ~5 ms; at worst ~100 ms.
 */
export const SEARCH_WINDOW_BYTES = 512 * 1024;

/**
 * The newest rows that pass `filtered`, at most `rows` of them and at most SEARCH_WINDOW_BYTES of
 * text (at least one row): the CTEs `lim` (rows only) and `win` (both bounds), for a window's
 * statement. `order`: the rows' order (newest first for the list, oldest first for an export).
 */
export function boundedWindow(c: Conditions, filtered: string, order: string, rows: number): string {
  const windowRows = c.param(rows);
  const windowBytes = c.param(SEARCH_WINDOW_BYTES);
  return `lim AS MATERIALIZED (
            SELECT events.id, events.received_at, events.event_type, least(events.payload_size, ${SEARCH_PAYLOAD_BYTES}) AS bytes
            FROM events ${filtered} ${order} LIMIT ${windowRows}
          ), win AS MATERIALIZED (
            SELECT counted.id, counted.received_at, counted.event_type FROM (
              SELECT lim.*, sum(lim.bytes) OVER (${order.replaceAll('events.', 'lim.')} ROWS UNBOUNDED PRECEDING) - lim.bytes AS before FROM lim
            ) AS counted WHERE counted.before < ${windowBytes}
          )`;
}

/**
 * One window of a search (steps 1 and 3 in SEARCH_BUDGET_MS's comment): the newest `rows` rows
 * that pass the other filters (bounded by SEARCH_WINDOW_BYTES) — after `from` when a walk
 * continues — each matched against its search text. Answers the matches (at most limit + 1,
 * newest first) and, on every row, what the window read (`ended`: no rows were left after it);
 * with no match, one row of that alone (its event columns null).
 */
export function searchWindowStep(query: EventQuery, rows: number, from?: Cursor, countNear = from === undefined): SqlStep {
  const c = listConditions(query, from);
  const patterns = searchPatterns(query.search ?? '');
  const filtered = c.sql();
  const window = boundedWindow(c, filtered, NEWEST_FIRST, rows);
  const match = payloadMatch('text.doc', c, patterns);
  const typeLike = c.param(patterns.eventType);
  // Only windows that estimate (searchUsesIndex) count; the rest of a walk need not.
  const near = countNear && patterns.trigrams.length > 0 ? patterns.trigrams.map((trigram) => `text.doc LIKE lower(${c.param(trigram)})`).join(' AND ') : 'false';
  const limit = c.param(query.limit + 1);
  const askedRows = c.param(rows);
  return {
    sql: `WITH ${window}, seen AS MATERIALIZED (
            SELECT win.id, win.received_at, (${match} OR win.event_type ILIKE ${typeLike}) AS hit, (${near}) AS near
            FROM win LEFT JOIN event_search ON event_search.event_id = win.id
            CROSS JOIN LATERAL (SELECT COALESCE(event_search.doc, (SELECT ${searchDoc('unindexed')} FROM events AS unindexed WHERE unindexed.id = win.id)) AS doc) AS text
          ), edge AS (
            SELECT min(win.received_at) AS received_at FROM win
          ), stats AS (
            SELECT count(*) AS scanned, count(*) FILTER (WHERE seen.near) AS near FROM seen
          )
          SELECT stats.scanned, stats.near, ${iso('edge.received_at')} AS edge_received_at,
                 (SELECT min(win.id) FROM win WHERE win.received_at = edge.received_at) AS edge_id,
                 (SELECT count(*) FROM lim) < ${askedRows} AND (SELECT count(*) FROM lim) = stats.scanned AS ended,
                 (SELECT max(all_events.id) - min(all_events.id) + 1 FROM events AS all_events) AS total,
                 GREATEST(0, (SELECT max(all_events.id) FROM events AS all_events) - (SELECT search_state.indexed_id FROM search_state)) AS unindexed,
                 state.backfill_rows, state.floor_received_at IS NOT NULL AS backfill_pending,
                 CASE WHEN isfinite(state.floor_received_at) THEN ${iso('state.floor_received_at')} END AS floor_received_at, state.floor_id,
                 hits.*
          FROM stats CROSS JOIN edge CROSS JOIN search_state AS state LEFT JOIN LATERAL (
            SELECT ${SUMMARY_COLUMNS}, events.received_at AS sort_at FROM events
            WHERE events.id = ANY(ARRAY(SELECT seen.id FROM seen WHERE seen.hit ORDER BY seen.received_at DESC, seen.id DESC LIMIT ${limit}))
          ) AS hits ON true
          ORDER BY hits.sort_at DESC, hits.id DESC`,
    params: c.params,
  };
}

/**
 * Whether `doc` (an SQL expression of search text) holds the search: a LIKE for a short search;
 * for a longer one a few short LIKEs (what the trigram index looks up, cheap to check) and then
 * the whole search as a literal regular expression, which Postgres matches in time linear in the
 * text whatever the search — a LIKE of a long pattern costs text × pattern on a repetitive text.
 */
export function payloadMatch(doc: string, c: Conditions, patterns: SearchPatterns): string {
  if (patterns.literal === null) return `${doc} LIKE lower(${c.param(patterns.payload)})`;
  const fragments = patterns.fragments.map((fragment) => `${doc} LIKE lower(${c.param(fragment)})`);
  return `(${[...fragments, `${doc} ~ lower(${c.param(patterns.literal)})`].join(' AND ')})`;
}

/**
 * A search's step 2: the candidates of the trigram index of the search text (event_search), the
 * events the search indexer has not reached yet (read directly; a short tail while it keeps up)
 * and event types — with plain index scans disabled, so the planner cannot walk every row in
 * received_at order looking for a rare word. While the index is being backfilled (`floor`), only
 * the part it covers: events at or above the floor; the search walks on below it.
 */
export function searchIndexStep(query: EventQuery, floor?: Cursor): SqlStep {
  const c = listConditions(query);
  if (floor) c.where.push(`(events.received_at, events.id) >= (${c.param(floor.received_at)}::timestamptz, ${c.param(floor.id)})`);
  const filtered = c.sql();
  const patterns = searchPatterns(query.search ?? '');
  const indexed = payloadMatch('event_search.doc', c, patterns);
  const typeLike = c.param(patterns.eventType);
  const unindexed = payloadMatch('text.doc', c, patterns);
  const limit = c.param(query.limit + 1);
  const candidates = `SELECT event_search.event_id FROM event_search WHERE ${indexed}
    UNION ALL SELECT event_search.event_id FROM event_search WHERE event_search.event_type ILIKE ${typeLike}
    UNION ALL SELECT tail.id FROM events AS tail CROSS JOIN LATERAL (SELECT ${searchDoc('tail')} AS doc) AS text
      WHERE tail.id > (SELECT search_state.indexed_id FROM search_state)
        AND (${unindexed} OR tail.event_type ILIKE ${typeLike})`;
  return {
    sql: `SELECT ${SUMMARY_COLUMNS} FROM events
          WHERE events.id = ANY(ARRAY(${candidates}))${filtered ? ` AND ${filtered.slice('WHERE '.length)}` : ''}
          ${NEWEST_FIRST} LIMIT ${limit}`,
    params: c.params,
    settings: ['enable_seqscan = off', 'enable_indexscan = off', 'enable_indexonlyscan = off'],
  };
}

/**
 * Whether a search goes to the index (step 2) for the events it has not read yet: when the index
 * should give few candidates there — estimated from how many of the rows read hold every counted
 * trigram (what the index looks up), scaled to the `total` left — and the unindexed tail is
 * short. A few such rows in a few hundred say little, so the estimate takes a generous upper
 * bound of their rate (count + 2√count + 1): the walk reads on and the estimate sharpens before
 * the index is trusted with a frequent trigram. None at all (rare and absent words) goes to the
 * index at once.
 */
export function searchUsesIndex(
  read: { scanned: number; near: number; total: number; unindexed: number },
  maxCandidates = SEARCH_INDEX_MAX_CANDIDATES,
): boolean {
  const near = read.near === 0 ? 0 : read.near + 2 * Math.sqrt(read.near) + 1;
  const candidates = (read.scanned === 0 ? 0 : (near / read.scanned) * read.total) + read.unindexed * SEARCH_TAIL_ROW_COST;
  return candidates < maxCandidates;
}

/** A search as its statements match it (searchPatterns). */
export interface SearchPatterns {
  /** The whole search as a LIKE pattern (the payload side for a short search; events' types). */
  payload: string;
  eventType: string;
  /** A few of its trigrams as LIKE patterns (the windows' estimate of what the index gives). */
  trigrams: string[];
  /** A search longer than SEARCH_LIKE_MAX_CHARS: a few short pieces of it (LIKE patterns) and the whole as a literal regular expression. */
  fragments: string[];
  literal: string | null;
}

/** A search up to this long is matched with one LIKE: its worst case (a repetitive text) stays ~8 steps a byte. */
const SEARCH_LIKE_MAX_CHARS = 8;
/** How many short pieces of a longer search are looked up in the trigram index and checked first. */
const SEARCH_FRAGMENTS = 4;

/**
 * LIKE patterns for a search. The payload side is matched against the search text of
 * event_search.doc (searchDoc: the payload's text, lowercased), so the statements lowercase the
 * pattern with the same lower() (`LIKE lower($n)`); non-ASCII text matches as text.
 * `trigrams`: a few of the search's trigrams (3 letters or digits in a row, as pg_trgm indexes
 * them), as patterns, for the windows' estimate of how much the index narrows the search down.
 *
 * A search without 3 letters or digits in a row gives the trigram index nothing to look up: it
 * would read every event, so it is refused rather than answered slowly.
 */
export function searchPatterns(search: string): SearchPatterns {
  if (search.length > MAX_SEARCH_CHARS) {
    throw new SwitchboardError('invalid_argument', `search is at most ${MAX_SEARCH_CHARS} characters (got ${search.length})`);
  }
  // Postgres text holds no NUL, and no payload's search text has one.
  const text = search.replaceAll('\u0000', '');
  const all = new Set<string>();
  for (const run of text.toLowerCase().match(/[a-z0-9]{3,}/g) ?? []) for (let i = 0; i + 3 <= run.length; i++) all.add(run.slice(i, i + 3));
  // Without 3 letters or digits in a row the trigram index has nothing to look up. Text beyond
  // ASCII (an emoji, a word in another script) is still searched, by the timed walk alone;
  // punctuation alone (`%`, `"":`) or a 2-letter word would match nearly every event: refused.
  if (all.size === 0 && !/[^\x00-\x7f]/.test(text)) {
    throw new SwitchboardError(
      'invalid_argument',
      `search needs at least 3 letters or digits in a row, e.g. a word or an id (${JSON.stringify(search)} would have to read every event)`,
    );
  }
  const like = (pattern: string) => `%${pattern.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
  const distinct = [...all];
  const step = Math.max(1, distinct.length / SEARCH_TRIGRAMS_COUNTED);
  const trigrams: string[] = [];
  for (let i = 0; i < distinct.length && trigrams.length < SEARCH_TRIGRAMS_COUNTED; i += step) trigrams.push(like(distinct[Math.floor(i)]!));
  const chars = [...text];
  if (chars.length <= SEARCH_LIKE_MAX_CHARS) return { payload: like(text), eventType: like(text), trigrams, fragments: [], literal: null };
  // A few short pieces spread over the search (its start and end among them), for the index and a cheap first check.
  const starts = new Set<number>();
  const last = chars.length - SEARCH_LIKE_MAX_CHARS;
  for (let i = 0; i < SEARCH_FRAGMENTS; i++) starts.add(Math.round((i * last) / (SEARCH_FRAGMENTS - 1)));
  const fragments = [...starts].map((start) => like(chars.slice(start, start + SEARCH_LIKE_MAX_CHARS).join('')));
  return { payload: like(text), eventType: like(text), trigrams, fragments, literal: text.replace(/[\\^$.*+?()[\]{}|]/g, (ch) => `\\${ch}`) };
}

/**
 * A search as one predicate on `events` (the export's, which reads every event anyway): the
 * search text event_search holds, or for an event the indexer has not reached, the same text
 * computed from its payload.
 */
export function searchMatch(c: Conditions, search: string): string {
  const patterns = searchPatterns(search);
  const text = `COALESCE((SELECT event_search.doc FROM event_search WHERE event_search.event_id = events.id), ${searchDoc('events')})`;
  return `(${payloadMatch(`(${text})`, c, patterns)} OR events.event_type ILIKE ${c.param(patterns.eventType)})`;
}

/**
 * The search part of listEvents: as SEARCH_BUDGET_MS's comment says — a first window, then the
 * index or a timed walk. The caller has waited for the journal (caughtUp) and checked the patterns.
 *
 * While the index is being built newest first (the backfill, migrations/0007), the index answers
 * for the part it covers — events at or above its floor — and the walk goes on below the floor;
 * an answer cut short there says how far indexing has come (`index_progress`), so an empty page
 * is never taken for "no match".
 */
export async function searchEvents(ctx: StoreContext, query: EventQuery, tuning?: SearchTuning): Promise<Page<EventSummary>> {
  const started = performance.now();
  const firstRows = tuning?.windowRows ?? searchWindowRows(query.limit);
  const first = await searchWindow(ctx, query, firstRows, undefined, true);
  const hits = first.hits;
  if (hits.length > query.limit || first.ended) return paginate(hits, query.limit);
  const { backfill } = first;
  // A search without a trigram (an emoji) gives the index nothing to look up: the walk alone.
  const indexable = searchPatterns(query.search ?? '').trigrams.length > 0;
  // The walk: each window as large as the time left allows at the rows per ms read so far, and
  // no larger than the matches found so far say the page needs, until it fills or time runs out.
  // While fewer than SEARCH_ESTIMATE_ROWS were read, each window also sharpens the estimate of
  // what the index would give for the rest; once that is small, the index answers the rest.
  let edge = first.edge;
  let scanned = first.scanned;
  let near = first.near;
  let counted = true; // the last window counted trigrams
  let indexUsed = false;
  for (;;) {
    const rest = { scanned, near, total: Math.max(0, first.total - scanned - backfill.rows), unindexed: first.unindexed };
    // The index covers the events from the edge down to the floor (all of them without a backfill).
    const covered = !backfill.pending || (backfill.floor !== null && edge !== null && after(edge, backfill.floor));
    if (!indexUsed && indexable && counted && edge && covered && searchUsesIndex(rest, tuning?.indexMaxCandidates)) {
      const older = await ctx.run<SummaryRow>(searchIndexStep({ ...query, cursor: encodeCursor(edge) }, backfill.pending ? backfill.floor! : undefined));
      hits.push(...older.map(toSummary));
      if (!backfill.pending || hits.length > query.limit) return paginate(hits, query.limit);
      // Every match down to the floor is in hand: walk on below it.
      indexUsed = true;
      edge = backfill.floor;
    }
    const elapsed = performance.now() - started;
    const remaining = (tuning?.budgetMs ?? SEARCH_BUDGET_MS) - elapsed;
    if (remaining <= 0 || !edge) break;
    const affordable = 0.9 * (scanned / Math.max(elapsed, 1)) * remaining;
    const needed = hits.length > 0 ? 1.5 * (query.limit + 1 - hits.length) * (scanned / hits.length) : Infinity;
    const rows = tuning?.windowRows ?? Math.min(SEARCH_WALK_MAX_ROWS, Math.max(SEARCH_WALK_MIN_ROWS, Math.floor(Math.min(affordable, needed))));
    counted = scanned < SEARCH_ESTIMATE_ROWS;
    const window = await searchWindow(ctx, query, rows, edge, counted);
    hits.push(...window.hits);
    if (hits.length > query.limit || window.ended) return paginate(hits, query.limit);
    edge = window.edge;
    scanned += window.scanned;
    near += window.near;
  }
  if (!edge) return paginate(hits, query.limit);
  const page: Page<EventSummary> = { items: hits, next_cursor: encodeCursor(edge), searched_back_to: edge.received_at };
  const unindexed = backfill.rows + first.unindexed;
  if (unindexed > 0) page.index_progress = { indexed: Math.max(0, first.total - unindexed), total: first.total };
  return page;
}

/** Whether `a` comes before `b` newest first, i.e. (received_at, id) is greater. */
function after(a: Cursor, b: Cursor): boolean {
  return a.received_at > b.received_at || (a.received_at === b.received_at && a.id > b.id);
}

interface SearchWindowResult {
  hits: EventSummary[];
  scanned: number;
  /** No rows are left after this window. */
  ended: boolean;
  near: number;
  total: number;
  unindexed: number;
  /** Where the index's backfill stands: pending, its floor (null while at the top), rows it has left. */
  backfill: { pending: boolean; floor: Cursor | null; rows: number };
  edge: Cursor | null;
}

/** One window's matches, and what it read. */
async function searchWindow(ctx: StoreContext, query: EventQuery, rows: number, from: Cursor | undefined, countNear: boolean): Promise<SearchWindowResult> {
  const result = await ctx.run<SearchWindowRow>(searchWindowStep(query, rows, from, countNear));
  const stats = result[0];
  const pending = stats?.backfill_pending === true;
  return {
    hits: result.filter((row) => row.id !== null).map(toSummary),
    scanned: Number(stats?.scanned ?? 0),
    ended: stats?.ended !== false,
    near: Number(stats?.near ?? 0),
    total: Number(stats?.total ?? 0),
    unindexed: Number(stats?.unindexed ?? 0),
    backfill: {
      pending,
      floor: pending && stats?.floor_received_at && stats.floor_id !== null ? { received_at: stats.floor_received_at, id: Number(stats.floor_id) } : null,
      rows: pending ? Math.max(0, Number(stats?.backfill_rows ?? 0)) : 0,
    },
    edge: stats?.edge_received_at && stats.edge_id !== null ? { received_at: stats.edge_received_at, id: Number(stats.edge_id) } : null,
  };
}
