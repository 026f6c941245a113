import { NEWEST_FIRST, REJECTION_COLUMNS, REPLAY_COLUMNS, SUMMARY_COLUMNS, iso } from './columns.js';
import { decodeCursor, encodeCursor, parseTimeFilter, type Cursor } from './cursor.js';
import type { EventQuery, Page, SqlStep } from './types.js';

/**
 * The statements of the store's list queries and bounded maintenance, as values (SqlStep): the
 * store runs them, and test/core/store/query-plans.test.ts EXPLAINs exactly these — every list query is
 * answered through an index, never a sequential scan or a sort of the table (DESIGN §5).
 */

/** Collects WHERE conditions and their numbered parameters. */
export class Conditions {
  readonly where: string[] = [];
  readonly params: unknown[] = [];

  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  add(sql: (placeholder: string) => string, value: unknown): void {
    this.where.push(sql(this.param(value)));
  }

  sql(): string {
    return this.where.length ? `WHERE ${this.where.join(' AND ')}` : '';
  }
}

/** Keyset condition: rows strictly after the cursor's row in newest-first order. */
function addCursor(conditions: Conditions, table: string, column: string, text: string): void {
  const cursor = decodeCursor(text);
  conditions.where.push(
    `(${table}.${column}, ${table}.id) < (${conditions.param(cursor.received_at)}::timestamptz, ${conditions.param(cursor.id)})`,
  );
}

/** The filters the list and the export share, with one meaning (and one index each). */
export function addEventFilters(
  c: Conditions,
  filter: Pick<EventQuery, 'provider' | 'event_type' | 'event_type_prefix' | 'trust_mode' | 'origin' | 'external_id'> & { since?: string | undefined; until?: string | undefined },
): void {
  if (filter.provider !== undefined) c.add((p) => `events.provider = ${p}`, filter.provider);
  if (filter.event_type !== undefined) c.add((p) => `events.event_type = ${p}`, filter.event_type);
  // A range of the (event_type, received_at) index where the database collation is C (PGlite's);
  // under another collation PostgreSQL filters instead, which is slower but still right.
  if (filter.event_type_prefix !== undefined) c.add((p) => `events.event_type LIKE ${p}`, `${escapeLike(filter.event_type_prefix)}%`);
  if (filter.trust_mode !== undefined) c.add((p) => `events.trust_mode = ${p}`, filter.trust_mode);
  if (filter.origin !== undefined) c.add((p) => `events.origin = ${p}`, filter.origin);
  if (filter.external_id !== undefined) c.add((p) => `events.external_id = ${p}`, filter.external_id);
  if (filter.since !== undefined) c.add((p) => `events.received_at >= ${p}::timestamptz`, parseTimeFilter('since', filter.since));
  if (filter.until !== undefined) c.add((p) => `events.received_at < ${p}::timestamptz`, parseTimeFilter('until', filter.until));
}

/** The list's filters, after_id and cursor included (a search walk's `from` replaces the cursor). */
export function listConditions(query: EventQuery, from?: Cursor): Conditions {
  const c = new Conditions();
  addEventFilters(c, { ...query, since: query.since_time, until: query.until_time });
  if (query.after_id !== undefined) c.add((p) => `events.id > ${p}`, query.after_id);
  if (query.drift !== undefined) c.where.push(`${query.drift ? '' : 'NOT '}EXISTS (${DRIFTED})`);
  if (from) c.where.push(`(events.received_at, events.id) < (${c.param(from.received_at)}::timestamptz, ${c.param(from.id)})`);
  else if (query.cursor !== undefined) addCursor(c, 'events', 'received_at', query.cursor);
  return c;
}

/**
 * The list without a search: one statement. Every filter the API and MCP accept has an index
 * (migrations/0001–0003; test/core/store/query-plans.test.ts EXPLAINs each combination).
 */
export function eventListStep(query: EventQuery): SqlStep {
  if (query.drift === true) return driftListStep(query);
  const c = listConditions(query);
  const limit = c.param(query.limit + 1);
  return { sql: `SELECT ${SUMMARY_COLUMNS} FROM events ${c.sql()} ${NEWEST_FIRST} LIMIT ${limit}`, params: c.params };
}

const DRIFTED = 'SELECT 1 FROM event_shapes WHERE event_shapes.event_id = events.id AND event_shapes.drift IS NOT NULL';

/**
 * The list of drifted events (DESIGN §16): walked from event_shapes' partial index of drifted
 * events, newest first, each joined to its event by primary key — drift is rare, so walking the
 * events and probing each would read most of the log for one page.
 */
function driftListStep(query: EventQuery): SqlStep {
  const c = listConditions({ ...query, drift: undefined, cursor: undefined });
  c.where.push('event_shapes.drift IS NOT NULL');
  if (query.cursor !== undefined) {
    const cursor = decodeCursor(query.cursor);
    c.where.push(`(event_shapes.received_at, event_shapes.event_id) < (${c.param(cursor.received_at)}::timestamptz, ${c.param(cursor.id)})`);
  }
  const limit = c.param(query.limit + 1);
  return {
    sql: `SELECT ${SUMMARY_COLUMNS} FROM event_shapes JOIN events ON events.id = event_shapes.event_id ${c.sql()}
          ORDER BY event_shapes.received_at DESC, event_shapes.event_id DESC LIMIT ${limit}`,
    params: c.params,
  };
}

/** The journal's filter load: stored keys in primary-key order. */
export function eventKeysAfterStep(afterId: number, limit: number): SqlStep {
  return {
    sql: 'SELECT events.id, events.provider, events.external_id FROM events WHERE events.id > $1 AND events.external_id IS NOT NULL ORDER BY events.id LIMIT $2',
    params: [afterId, limit],
  };
}

/**
 * The journal's redelivery lookup: one provider's events with these external ids, through the
 * (provider, external_id) unique index. `= ANY` costs ~30 % less than a join on unnest() pairs
 * in the embedded database, where each lookup's fixed cost is most of it.
 */
export function eventsByKeysStep(provider: string, externalIds: readonly string[]): SqlStep {
  return {
    sql: `SELECT ${SUMMARY_COLUMNS} FROM events WHERE events.provider = $1 AND events.external_id = ANY($2::text[])`,
    params: [provider, externalIds],
  };
}

/** MCP wait_for_webhook_event's first look: the primary key range after `after_id`. */
export function firstEventAfterStep(query: { provider?: string; event_type?: string; after_id: number }): SqlStep {
  const c = new Conditions();
  c.add((p) => `events.id > ${p}`, query.after_id);
  if (query.provider !== undefined) c.add((p) => `events.provider = ${p}`, query.provider);
  if (query.event_type !== undefined) c.add((p) => `events.event_type = ${p}`, query.event_type);
  return { sql: `SELECT ${SUMMARY_COLUMNS} FROM events ${c.sql()} ORDER BY events.id LIMIT 1`, params: c.params };
}

/**
 * Retention's bounded DELETEs: each picks at most `batchRows` ids through an index, then deletes
 * them by primary key (`= ANY(ARRAY(…))`: an `IN (subquery)` may become a hash join over a
 * sequential scan of the whole table).
 */
export function retentionStatements(batchRows: number) {
  const batch = (table: string, where: string, order: string) =>
    `DELETE FROM ${table} WHERE id = ANY(ARRAY(SELECT id FROM ${table} WHERE ${where} ORDER BY ${order} LIMIT ${Math.trunc(batchRows)}))`;
  return {
    eventsByAge: withSearchRows(batch('events', 'events.received_at < now() - make_interval(secs => $1)', 'events.received_at, events.id')),
    eventsUpTo: withSearchRows(batch('events', '(events.received_at, events.id) <= ($1::timestamptz, $2)', 'events.received_at, events.id')),
    rejectionsByAge: counted(batch('rejections', 'rejections.received_at < now() - make_interval(secs => $1)', 'rejections.received_at, rejections.id')),
    rejectionsUpToId: counted(batch('rejections', 'rejections.id <= $1', 'rejections.id')),
  };
}

/** A bounded DELETE as a statement answering `n`, the rows it deleted. */
const counted = (deleteRows: string) => `WITH gone AS (${deleteRows} RETURNING 1) SELECT count(*) AS n FROM gone`;

/** The same for events, taking their search rows (migrations/0005) along in the same statement. */
function withSearchRows(deleteEvents: string): string {
  return `WITH gone AS (${deleteEvents} RETURNING id), unindexed AS (
      DELETE FROM event_search WHERE event_search.event_id = ANY(ARRAY(SELECT id FROM gone)))
    SELECT count(*) AS n FROM gone`;
}

/** How many ids the events span (max − min + 1): two probes of the primary key, never a scan. */
export const EVENT_ID_SPAN = 'SELECT max(events.id) - min(events.id) + 1 AS n FROM events';

/** The row `offset` places past `after` (or past the newest) in newest-first order. */
export function nthNewestStep(offset: number, after: Cursor | null): SqlStep {
  const c = new Conditions();
  if (after) {
    c.where.push(`(events.received_at, events.id) < (${c.param(after.received_at)}::timestamptz, ${c.param(after.id)})`);
  }
  const skip = c.param(offset);
  return { sql: `SELECT ${iso('events.received_at')} AS received_at, events.id FROM events ${c.sql()} ${NEWEST_FIRST} OFFSET ${skip} LIMIT 1`, params: c.params };
}

export function rejectionListStep(query: { provider?: string; limit: number; cursor?: string }): SqlStep {
  const c = new Conditions();
  if (query.provider !== undefined) c.add((p) => `rejections.provider = ${p}`, query.provider);
  if (query.cursor !== undefined) addCursor(c, 'rejections', 'received_at', query.cursor);
  const limit = c.param(query.limit + 1);
  return {
    sql: `SELECT ${REJECTION_COLUMNS} FROM rejections ${c.sql()} ORDER BY rejections.received_at DESC, rejections.id DESC LIMIT ${limit}`,
    params: c.params,
  };
}

/**
 * MCP's check that a provider filter names something real (src/core/mcp/provider-filter.ts).
 * Each probe is a scalar subquery ordered like the (provider, received_at, id) index, so it is
 * one index lookup: EXISTS would drop the ORDER BY/LIMIT, and the planner then picks a Seq Scan
 * for a provider it thinks is common enough.
 */
export function providerSeenStep(provider: string): SqlStep {
  const probe = (table: string) =>
    `(SELECT ${table}.id FROM ${table} WHERE ${table}.provider = $1 ORDER BY ${table}.received_at DESC, ${table}.id DESC LIMIT 1) IS NOT NULL`;
  return { sql: `SELECT ${probe('events')} OR ${probe('rejections')} AS seen`, params: [provider] };
}

export function replayListStep(eventId: number, limit: number): SqlStep {
  return {
    sql: `SELECT ${REPLAY_COLUMNS} FROM replays WHERE replays.event_id = $1 ORDER BY replays.created_at DESC, replays.id DESC LIMIT $2`,
    params: [eventId, limit],
  };
}

/** `LIKE` reads `\`, `%` and `_` as syntax; user text matches them literally. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** The first `limit` rows of `limit + 1` read, and a cursor after them when there were more. */
export function paginate<T extends { received_at: string; id: number }>(rows: T[], limit: number): Page<T> {
  if (rows.length <= limit) return { items: rows };
  const items = rows.slice(0, limit);
  const last = items[items.length - 1]!;
  const cursor: Cursor = { received_at: last.received_at, id: last.id };
  return { items, next_cursor: encodeCursor(cursor) };
}
