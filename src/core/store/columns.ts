import type { EventSummary, Rejection } from '../../shared/events.js';
import type { CopyType } from './copy-binary.js';
import type { JournalEvent } from '../new-event.js';
import type { EventRecord, ReplayRecord } from './types.js';

/**
 * What the store's statements select and insert, and how a row becomes a record — one place,
 * so every statement that reads an event reads the same columns the same way.
 */

/** Exact stored time as ISO-8601 UTC with microseconds. */
export const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

// The output column `received_at` is text: ORDER BY and WHERE must name events.received_at, or
// ORDER BY sorts by the text alias (a Seq Scan and a sort of every row instead of the index).
// `drift`: the shape tracker marked the event (DESIGN §16): one primary-key probe of event_shapes
// per row — a scalar subquery with LIMIT, which the planner cannot turn into a hash of the table.
export const SUMMARY_COLUMNS = `events.id, events.provider, events.family, events.event_type, events.external_id, events.origin,
  events.trust_mode, events.verified, events.payload_size, ${iso('events.received_at')} AS received_at, events.attempts,
  (SELECT true FROM event_shapes WHERE event_shapes.event_id = events.id AND event_shapes.drift IS NOT NULL LIMIT 1) IS NOT NULL AS drift`;
export const DETAIL_COLUMNS = `${SUMMARY_COLUMNS}, events.verify_detail, events.content_type, events.source_ip, events.headers, events.payload`;
/**
 * An export's: payloads as base64 text — PGlite's JS parser of bytea results is ~0.5 ms per KB
 * (measured), Buffer's base64 decoder is native. (Postgres wraps the base64 in lines; Buffer
 * skips them.)
 */
export const EXPORT_COLUMNS = `${SUMMARY_COLUMNS}, events.verify_detail, events.content_type, events.source_ip, events.headers,
  encode(events.payload, 'base64') AS payload_base64`;
export const NEWEST_FIRST = 'ORDER BY events.received_at DESC, events.id DESC';

/**
 * Search looks at the first 64 KiB of a payload. Indexing more costs every insert of a large
 * body (trigram extraction is linear in the text) for matches a developer rarely needs.
 */
export const SEARCH_PAYLOAD_BYTES = 64 * 1024;
/**
 * The text a search matches in a payload, as event_search.doc holds it: the first
 * SEARCH_PAYLOAD_BYTES as text — UTF-8 decoded, or the ASCII text of a payload that is not UTF-8 —
 * lowercased (`switchboard_search_text`, migrations/0007), so a search is a plain LIKE of a
 * lowercased pattern. (ILIKE lowercases every row's text again on each search: ~20 µs a row
 * against ~1 µs.)
 */
export const searchDoc = (table: string) => `switchboard_search_text(${table}.payload)`;

export const EVENT_INSERT_COLUMNS = [
  'provider',
  'family',
  'event_type',
  'external_id',
  'trust_mode',
  'verified',
  'verify_detail',
  'content_type',
  'headers',
  'payload',
  'payload_size',
  'source_ip',
  'origin',
] as const;
export const CASTS: Partial<Record<(typeof EVENT_INSERT_COLUMNS)[number], string>> = { headers: '::jsonb', payload: '::bytea' };
/** The journal gives every row its id and time (src/core/journal). */
export const JOURNAL_INSERT_COLUMNS = ['id', 'received_at', ...EVENT_INSERT_COLUMNS] as const;
/** Each column's type in binary COPY (copy-binary.ts). */
const JOURNAL_COPY_TYPE: Record<(typeof JOURNAL_INSERT_COLUMNS)[number], CopyType> = {
  id: 'int8',
  received_at: 'timestamptz',
  provider: 'text',
  family: 'text',
  event_type: 'text',
  external_id: 'text',
  trust_mode: 'text',
  verified: 'bool',
  verify_detail: 'text',
  content_type: 'text',
  headers: 'jsonb',
  payload: 'bytea',
  payload_size: 'int4',
  source_ip: 'text',
  origin: 'text',
};
export const JOURNAL_COPY_TYPES = JOURNAL_INSERT_COLUMNS.map((column) => JOURNAL_COPY_TYPE[column]);
/** An event's values in JOURNAL_INSERT_COLUMNS order. */
export const journalCopyRow = (event: JournalEvent): unknown[] =>
  JOURNAL_INSERT_COLUMNS.map((column) => (column === 'payload_size' ? event.payload.byteLength : event[column]));

export type SummaryRow = Omit<EventSummary, 'id' | 'attempts'> & { id: number | string | bigint; attempts?: number | string };

/** An event's row without its payload, which comes in whichever form the statement chose. */
export type DetailRow = SummaryRow & Omit<EventRecord, keyof EventSummary | 'payload'>;
export type ExportRow = DetailRow & { payload_base64: string };

export function toSummary(row: SummaryRow): EventSummary {
  return {
    id: Number(row.id),
    provider: row.provider,
    family: row.family,
    event_type: row.event_type,
    external_id: row.external_id,
    origin: row.origin,
    trust_mode: row.trust_mode,
    verified: row.verified,
    payload_size: Number(row.payload_size),
    received_at: row.received_at,
    attempts: Number(row.attempts ?? 1),
    drift: row.drift === true,
  };
}

export function toRecord(row: DetailRow, payload: Uint8Array): EventRecord {
  return {
    ...toSummary(row),
    verify_detail: row.verify_detail,
    content_type: row.content_type,
    source_ip: row.source_ip,
    headers: asHeaders(row.headers),
    payload,
  };
}

export const toExported = (row: ExportRow) => toRecord(row, new Uint8Array(Buffer.from(row.payload_base64, 'base64')));

export function toBytes(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'string') return new TextEncoder().encode(value);
  return new Uint8Array(0);
}

export function asHeaders(value: unknown): Record<string, string> {
  if (typeof value === 'string') return JSON.parse(value) as Record<string, string>;
  return (value ?? {}) as Record<string, string>;
}

function asList(value: unknown): string[] {
  const list: unknown = typeof value === 'string' ? JSON.parse(value) : value;
  return Array.isArray(list) ? list.map(String) : [];
}

export const REJECTION_COLUMNS = `rejections.id, rejections.provider, rejections.reason, rejections.hint, rejections.headers,
  rejections.headers_truncated, rejections.body_size, rejections.body_sha256, rejections.source_ip,
  ${iso('rejections.received_at')} AS received_at`;

export type RejectionRow = Omit<Rejection, 'id'> & { id: number | string };

export function toRejection(row: RejectionRow): Rejection {
  return {
    ...row,
    id: Number(row.id),
    headers: asHeaders(row.headers),
    body_size: Number(row.body_size),
  };
}

export const REPLAY_COLUMNS = `replays.id, replays.event_id, replays.target_url, replays.resigned, replays.delivered, replays.response_status,
  replays.response_ms, replays.response_headers, replays.response_body, replays.error, replays.requested_by, replays.payload_edited,
  replays.headers_overridden, replays.request_headers, replays.warning, replays.chaos, ${iso('replays.created_at')} AS created_at`;

export type ReplayRow = Omit<ReplayRecord, 'id' | 'event_id'> & { id: number | string; event_id: number | string };

export function toReplay(row: ReplayRow): ReplayRecord {
  return {
    ...row,
    id: Number(row.id),
    event_id: Number(row.event_id),
    response_headers: row.response_headers === null ? null : asHeaders(row.response_headers),
    headers_overridden: asList(row.headers_overridden),
    request_headers: row.request_headers === null || row.request_headers === undefined ? null : asHeaders(row.request_headers),
    warning: row.warning ?? null,
    chaos: row.chaos ?? null,
    response_body: row.response_body === null ? null : toBytes(row.response_body),
  };
}
