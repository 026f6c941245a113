import type { SqlClient } from './sql-client.js';

/**
 * What the Providers screen and the Events footer show about the log without counting it
 * (STACK.md: count(*) over a million rows is ~730 ms): per provider its last delivery and
 * rejection, and how many of each, counted through (provider, received_at) indexes only up to
 * ACTIVITY_COUNT_CAP rows — a provider past it reads "1,000+"; and an estimate of the events
 * stored from the two ends of the primary key (ids are handed out in order and retention deletes
 * the oldest, so max - min + 1 is close; gaps left by dropped rows make it an upper bound).
 * test/core/store/provider-activity.test.ts EXPLAINs both at scale.
 */

export const ACTIVITY_COUNT_CAP = 1000;

export interface ProviderActivityRecord {
  provider: string;
  last_event_at: string | null;
  /** Events of this provider, counted up to ACTIVITY_COUNT_CAP. */
  events: number;
  last_rejection_at: string | null;
  /** Rejections of this provider, counted up to ACTIVITY_COUNT_CAP. */
  rejections: number;
}

export interface ActivityRecord {
  /** Counts stop here (ACTIVITY_COUNT_CAP): a count equal to it reads "1,000+". */
  count_cap: number;
  providers: ProviderActivityRecord[];
  /** Rejections of every provider (configured or not), counted up to ACTIVITY_COUNT_CAP. */
  rejections: number;
  /** max(id) - min(id) + 1 of the stored events: an estimate, never a count. */
  events_estimate: number;
}

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * Per provider: one probe and one bounded walk of each (provider, received_at DESC, id DESC)
 * index. Each provider is its own parameter, not a row of unnest(): given the name, the planner
 * knows how common it is — from a join column it would walk (received_at, id) and filter on the
 * provider, the whole table for a quiet one. A common provider may be read through
 * (received_at, id) instead, which finds its ACTIVITY_COUNT_CAP rows after a few times as many.
 */
export function providerActivityStep(providers: readonly string[]): { sql: string; params: unknown[] } {
  if (providers.length === 0) return { sql: 'SELECT NULL::text AS provider WHERE false', params: [] };
  const order = (table: string) => `ORDER BY ${table}.received_at DESC, ${table}.id DESC`;
  const bounded = (table: string, name: string) =>
    `(SELECT count(*) FROM (SELECT 1 FROM ${table} WHERE ${table}.provider = ${name} ${order(table)} LIMIT ${ACTIVITY_COUNT_CAP}) AS capped)`;
  const newest = (table: string, name: string) => `(SELECT ${iso(`${table}.received_at`)} FROM ${table} WHERE ${table}.provider = ${name} ${order(table)} LIMIT 1)`;
  const one = (name: string) =>
    `SELECT ${name} AS provider, ${newest('events', name)} AS last_event_at, ${bounded('events', name)} AS events,
            ${newest('rejections', name)} AS last_rejection_at, ${bounded('rejections', name)} AS rejections`;
  return { sql: providers.map((_, i) => one(`$${i + 1}::text`)).join('\nUNION ALL\n'), params: [...providers] };
}

/** Every rejection, newest first, up to the cap (rejections_received_idx), and the events estimate (the primary key's ends). */
export function logTotalsStep(): { sql: string; params: unknown[] } {
  return {
    sql: `SELECT (SELECT count(*) FROM (SELECT 1 FROM rejections ORDER BY rejections.received_at DESC, rejections.id DESC LIMIT ${ACTIVITY_COUNT_CAP}) AS capped) AS rejections,
            COALESCE((SELECT max(events.id) FROM events) - (SELECT min(events.id) FROM events) + 1, 0) AS events_estimate`,
    params: [],
  };
}

export async function readActivity(db: SqlClient, providers: readonly string[]): Promise<ActivityRecord> {
  const perProvider = providerActivityStep(providers);
  const totals = logTotalsStep();
  const [rows, [total]] = await Promise.all([
    db.query<{ provider: string; last_event_at: string | null; events: number | string; last_rejection_at: string | null; rejections: number | string }>(perProvider.sql, perProvider.params),
    db.query<{ rejections: number | string; events_estimate: number | string }>(totals.sql, totals.params),
  ]);
  return {
    count_cap: ACTIVITY_COUNT_CAP,
    providers: rows.map((row) => ({ ...row, events: Number(row.events), rejections: Number(row.rejections) })),
    rejections: Number(total?.rejections ?? 0),
    events_estimate: Number(total?.events_estimate ?? 0),
  };
}
