import type { EventSummary, Family, Origin, Rejection, Replay, TrustMode } from '../../shared/events.js';
import { SwitchboardError } from '../errors.js';
import { decodeCursor, encodeCursor, parseTimeFilter, type Cursor } from './cursor.js';
import type { SqlClient } from './sql-client.js';
import { readActivity, type ActivityRecord } from './provider-activity.js';
import { readSearchSnippets } from './search-snippets.js';
import { SEARCH_INDEX_BATCH_ROWS } from './search-indexer.js';
import type { EventJournal, JournalTarget } from '../journal/event-journal.js';
import type { JournalEvent } from '../journal/record.js';
import { encodeCopyBinary, ISO_UTC, type CopyType } from './copy-binary.js';
import {
  MAX_CONTENT_TYPE_CHARS,
  MAX_DETAIL_CHARS,
  MAX_EVENT_TYPE_CHARS,
  MAX_EXTERNAL_ID_CHARS,
  MAX_REJECTION_HEADERS_BYTES,
  storableHeaders,
  storableOrNull,
  storableText,
} from './storable.js';

/**
 * The only code that writes SQL. Everything that reads or writes the event log goes through
 * `EventStore`; it runs the same statements on PGlite and PostgreSQL.
 */

export interface NewEvent {
  provider: string;
  family: Family;
  event_type: string | null;
  external_id: string | null;
  trust_mode: TrustMode;
  verified: boolean;
  verify_detail: string | null;
  content_type: string | null;
  /** Already sanitized: the store never sees a secret-bearing header value. */
  headers: Record<string, string>;
  payload: Uint8Array;
  source_ip: string | null;
  /** Defaults to 'provider'. */
  origin?: Origin;
}

export interface EventRecord extends EventSummary {
  verify_detail: string | null;
  content_type: string | null;
  source_ip: string | null;
  headers: Record<string, string>;
  payload: Uint8Array;
}

export interface InsertResult {
  event: EventSummary;
  duplicate: boolean;
  /**
   * Resolves once the event is visible to reads (true), or false if the database dropped it.
   * Acknowledging may come first (the journal, DESIGN §5); the live bus, SSE and forward rules
   * wait for this, so they never announce an id a read cannot find yet.
   */
  visible: Promise<boolean>;
}

export interface NewRejection {
  provider: string;
  reason: string;
  hint: string | null;
  headers: Record<string, string>;
  headers_truncated?: boolean;
  body_size: number;
  body_sha256: string;
  source_ip: string | null;
}

export interface NewReplay {
  event_id: number;
  target_url: string;
  resigned: boolean;
  delivered: boolean;
  response_status: number | null;
  response_ms: number | null;
  response_headers: Record<string, string> | null;
  response_body: Uint8Array | null;
  error: string | null;
  requested_by: Replay['requested_by'];
  payload_edited?: boolean;
  headers_overridden?: string[];
  request_headers?: Record<string, string> | null;
  warning?: string | null;
}

export interface ReplayRecord extends Omit<Replay, 'response_body' | 'response_body_encoding'> {
  response_body: Uint8Array | null;
}

export type LastReplayRecord = Pick<Replay, 'delivered' | 'response_status' | 'requested_by' | 'created_at'>;

export interface EventQuery {
  provider?: string;
  event_type?: string;
  /** Types starting with this text (a `LIKE 'x%'` the (event_type, received_at) index serves). */
  event_type_prefix?: string;
  trust_mode?: TrustMode;
  origin?: Origin;
  external_id?: string;
  /**
   * Case-insensitive (ASCII) substring of the payload's first SEARCH_PAYLOAD_BYTES or of the
   * event type; non-ASCII bytes match exactly. Needs 3 letters or digits in a row.
   */
  search?: string;
  /** Only events received at or after this ISO time. */
  since_time?: string;
  /** Only events received before this ISO time. */
  until_time?: string;
  /** Only events with a greater id. */
  after_id?: number;
  limit: number;
  cursor?: string;
}

/** One statement of a list query, exactly as the store sends it (tests EXPLAIN these). */
export interface SqlStep {
  sql: string;
  params: unknown[];
  /** Planner settings applied with SET LOCAL around this statement, in a transaction. */
  settings?: readonly string[];
}

/** What `GET /api/export` filters on (DESIGN §12); times are ISO-8601, `until` exclusive. */
export interface ExportFilter {
  provider?: string;
  event_type?: string;
  event_type_prefix?: string;
  trust_mode?: TrustMode;
  origin?: Origin;
  search?: string;
  since?: string;
  until?: string;
}

/** An event as an import file carries it: its own received_at, origin set by the store. */
export interface ImportedEvent extends Omit<NewEvent, 'origin'> {
  received_at: string;
}

export interface Page<T> {
  items: T[];
  next_cursor?: string;
  /**
   * Only on a search that ran out of time (SEARCH_BUDGET_MS) before it filled the page: the
   * received_at of the oldest event it read. Every event newer than that was searched; older
   * ones were not yet, and next_cursor continues there.
   */
  searched_back_to?: string;
}

export interface RetentionPolicy {
  max_age_days: number;
  max_rows: number;
  max_rejections: number;
}

export interface RetentionResult {
  events: number;
  rejections: number;
}

export const MAX_BATCH_ROWS = 256;
/**
 * Retention deletes at most this many rows per statement and yields between statements: one
 * DELETE of 500k rows holds the single-threaded embedded database for seconds (STACK.md), and
 * in-process PGlite holds the event loop too. 5,000 rows took ~1 s on a loaded 2-core machine
 * (docs/benchmarks.md); 1,000 keeps a delivery's worst wait near a fifth of that.
 */
export const RETENTION_BATCH_ROWS = 1_000;
/** The cut-off row for max_rows is found in steps of this many index entries (same reason). */
const RETENTION_SEEK_ROWS = 50_000;
/**
 * Rejections are trimmed after this many inserts (or a tenth of the cap, if smaller), not only by
 * the hourly job; a trim leaves room for that many, so the table never holds more than the cap.
 */
const REJECTION_TRIM_EVERY = 500;
const rejectionTrimEvery = (cap: number) => Math.max(1, Math.min(REJECTION_TRIM_EVERY, Math.floor(cap / 10)));
/**
 * Search looks at the first 64 KiB of a payload. Indexing more costs every insert of a large
 * body (trigram extraction is linear in the text) for matches a developer rarely needs.
 */
export const SEARCH_PAYLOAD_BYTES = 64 * 1024;
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
export const MAX_SEARCH_CHARS = 1_000;
/** Events an export batch with a search reads at most (~10 µs each at a million events). */
export const EXPORT_SEARCH_SCAN_ROWS = 5_000;
export const DEFAULT_MAX_REJECTIONS = 50_000;
/** NOTIFY channel on which instances sharing a PostgreSQL event log announce new events. */
export const EVENTS_CHANNEL = 'switchboard_events';
export const MAX_RESPONSE_BODY_BYTES = 64 * 1024;

/** Exact stored time as ISO-8601 UTC with microseconds. */
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

// The output column `received_at` is text: ORDER BY and WHERE must name events.received_at, or
// ORDER BY sorts by the text alias (a Seq Scan and a sort of every row instead of the index).
const SUMMARY_COLUMNS = `events.id, events.provider, events.family, events.event_type, events.external_id, events.origin,
  events.trust_mode, events.verified, events.payload_size, ${iso('events.received_at')} AS received_at`;
const DETAIL_COLUMNS = `${SUMMARY_COLUMNS}, events.verify_detail, events.content_type, events.source_ip, events.headers, events.payload`;
/**
 * An export's: payloads as base64 text — PGlite's JS parser of bytea results is ~0.5 ms per KB
 * (measured), Buffer's base64 decoder is native. (Postgres wraps the base64 in lines; Buffer
 * skips them.)
 */
const EXPORT_COLUMNS = `${SUMMARY_COLUMNS}, events.verify_detail, events.content_type, events.source_ip, events.headers,
  encode(events.payload, 'base64') AS payload_base64`;
const NEWEST_FIRST = 'ORDER BY events.received_at DESC, events.id DESC';
/**
 * The text a search matches in a payload, as event_search.doc holds it (migrations/0005, 0006):
 * the first SEARCH_PAYLOAD_BYTES through encode(…, 'escape') — which never fails, whatever the
 * bytes — lowercased, so a search is a plain LIKE of a lowercased pattern. (ILIKE lowercases
 * every row's text again on each search: ~20 µs a row against ~1 µs.)
 */
const searchDoc = (table: string) => `lower(encode(substring(${table}.payload from 1 for ${SEARCH_PAYLOAD_BYTES}), 'escape'))`;

const EVENT_INSERT_COLUMNS = [
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
const CASTS: Partial<Record<(typeof EVENT_INSERT_COLUMNS)[number], string>> = { headers: '::jsonb', payload: '::bytea' };
/** The journal gives every row its id and time (src/core/journal). */
const JOURNAL_INSERT_COLUMNS = ['id', 'received_at', ...EVENT_INSERT_COLUMNS] as const;
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
const JOURNAL_COPY_TYPES = JOURNAL_INSERT_COLUMNS.map((column) => JOURNAL_COPY_TYPE[column]);
/** An event's values in JOURNAL_INSERT_COLUMNS order. */
const journalCopyRow = (event: JournalEvent): unknown[] =>
  JOURNAL_INSERT_COLUMNS.map((column) => (column === 'payload_size' ? event.payload.byteLength : event[column]));

type SummaryRow = Omit<EventSummary, 'id'> & { id: number | string | bigint };

/** An event's row without its payload, which comes in whichever form the statement chose. */
type DetailRow = SummaryRow & Omit<EventRecord, keyof EventSummary | 'payload'>;
type ExportRow = DetailRow & { payload_base64: string };

function toRecord(row: DetailRow, payload: Uint8Array): EventRecord {
  return {
    ...toSummary(row),
    verify_detail: row.verify_detail,
    content_type: row.content_type,
    source_ip: row.source_ip,
    headers: asHeaders(row.headers),
    payload,
  };
}

const toExported = (row: ExportRow) => toRecord(row, new Uint8Array(Buffer.from(row.payload_base64, 'base64')));

function toSummary(row: SummaryRow): EventSummary {
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
  };
}

function toBytes(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'string') return new TextEncoder().encode(value);
  return new Uint8Array(0);
}

function asHeaders(value: unknown): Record<string, string> {
  if (typeof value === 'string') return JSON.parse(value) as Record<string, string>;
  return (value ?? {}) as Record<string, string>;
}

interface PendingInsert {
  event: NewEvent;
  resolve: (result: InsertResult) => void;
  reject: (error: unknown) => void;
}

const VISIBLE = Promise.resolve(true);

export class EventStore implements JournalTarget {
  private readonly pending: PendingInsert[] = [];
  /** Set on the embedded database: inserts go through the journal (src/core/journal). */
  private journal: EventJournal | null = null;
  private flushScheduled = false;
  private flushing: Promise<void> | null = null;
  private closed = false;
  private rejectionsSinceTrim = 0;
  private trimming: Promise<void> | null = null;
  /** Tells this instance's own notifications apart from other instances'. */
  private readonly instanceId = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;

  /** `maxRejections` is read at each trim, so a config reload applies without a restart. */
  constructor(
    private readonly db: SqlClient,
    private readonly options: {
      maxRejections?: () => number;
      /** Tests only: how a search reads (SEARCH_BUDGET_MS, SEARCH_INDEX_MAX_CANDIDATES, searchWindowRows). */
      search?: SearchTuning;
    } = {},
  ) {}

  private rejectionCap(): number {
    return this.options.maxRejections?.() ?? DEFAULT_MAX_REJECTIONS;
  }

  get databaseKind(): SqlClient['kind'] {
    return this.db.kind;
  }

  /** From now on inserts are acknowledged from `journal`, and every read waits for it (read-your-writes). */
  useJournal(journal: EventJournal): void {
    this.journal = journal;
  }

  /** When the last read began (performance.now()): retention's VACUUM waits for a pause in them. */
  lastReadAt = -Infinity;

  /** Every read starts here: it sees every event acknowledged before it began. */
  private caughtUp(): Promise<void> {
    this.lastReadAt = performance.now();
    return this.journal ? this.journal.barrier() : VISIBLE.then(() => {});
  }

  /**
   * Group commit: inserts that arrive in the same event-loop turn become one multi-row INSERT
   * (STACK.md: ~3× the throughput of a statement per request, and a fixed timer window is
   * slower at every concurrency). The promise settles only once the row is committed, so the
   * receiver can answer after storage (store-then-ack).
   */
  insertEvent(event: NewEvent): Promise<InsertResult> {
    if (this.closed) return Promise.reject(new SwitchboardError('storage_unavailable', 'the event store is closed'));
    if (this.journal) return this.journal.submit({ ...storableEvent(event), origin: event.origin ?? 'provider' });
    return new Promise((resolve, reject) => {
      this.pending.push({ event, resolve, reject });
      this.scheduleFlush();
    });
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.flushing) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flushing = this.flushAll().finally(() => {
        this.flushing = null;
        if (this.pending.length > 0) this.scheduleFlush();
      });
    });
  }

  private async flushAll(): Promise<void> {
    while (this.pending.length > 0) await this.storeBatch(this.pending.splice(0, MAX_BATCH_ROWS));
  }

  /**
   * One row the database refuses must not fail the deliveries committed with it (DESIGN §4):
   * a refused batch is split in halves and retried, so only the offending row's delivery fails.
   */
  private async storeBatch(batch: PendingInsert[]): Promise<void> {
    try {
      const results = await this.insertBatch(batch.map((item) => item.event));
      batch.forEach((item, index) => item.resolve(results[index]!));
    } catch (error) {
      if (batch.length > 1) {
        const half = Math.ceil(batch.length / 2);
        await this.storeBatch(batch.slice(0, half));
        await this.storeBatch(batch.slice(half));
        return;
      }
      batch[0]!.reject(new SwitchboardError('storage_unavailable', `storing events failed: ${(error as Error).message}`, { cause: error }));
    }
  }

  private async insertBatch(incoming: NewEvent[]): Promise<InsertResult[]> {
    const events = incoming.map(storableEvent);
    const params: unknown[] = [];
    const tuples = events.map((event) => {
      const values: Record<(typeof EVENT_INSERT_COLUMNS)[number], unknown> = {
        ...event,
        headers: JSON.stringify(event.headers),
        payload_size: event.payload.byteLength,
        origin: event.origin ?? 'provider',
      };
      const placeholders = EVENT_INSERT_COLUMNS.map((column) => {
        params.push(values[column]);
        return `$${params.length}${CASTS[column] ?? ''}`;
      });
      return `(${placeholders.join(', ')})`;
    });
    // RETURNING comes back in VALUES order with conflicting rows left out; each input row is
    // matched to the next returned row by (provider, external_id), so a skipped row is a duplicate.
    // Without a journal (PostgreSQL) the search text is indexed in the same statement: several
    // instances may share the database, and a row committed late must not slip past the indexer.
    const inserted = await this.db.query<SummaryRow>(
      `WITH ins AS (
         INSERT INTO events (${EVENT_INSERT_COLUMNS.join(', ')}) VALUES ${tuples.join(', ')}
         ON CONFLICT (provider, external_id) WHERE external_id IS NOT NULL DO NOTHING
         RETURNING *
       ), indexed AS (
         INSERT INTO event_search (event_id, doc, event_type) SELECT ins.id, ${searchDoc('ins')}, ins.event_type FROM ins ON CONFLICT DO NOTHING
       )
       SELECT ${SUMMARY_COLUMNS.replaceAll('events.', 'ins.')} FROM ins ORDER BY ins.id`,
      params,
    );
    const results: (InsertResult | undefined)[] = [];
    const duplicates: number[] = [];
    let next = 0;
    events.forEach((event, index) => {
      const row = inserted[next];
      if (row && row.provider === event.provider && row.external_id === event.external_id) {
        results[index] = { event: toSummary(row), duplicate: false, visible: VISIBLE };
        next++;
      } else {
        duplicates.push(index);
      }
    });
    if (duplicates.length > 0) {
      const keys: unknown[] = [];
      const pairs = duplicates.map((index) => {
        keys.push(events[index]!.provider, events[index]!.external_id);
        return `($${keys.length - 1}, $${keys.length})`;
      });
      const firsts = await this.db.query<SummaryRow>(
        `SELECT ${SUMMARY_COLUMNS} FROM events WHERE (events.provider, events.external_id) IN (${pairs.join(', ')})`,
        keys,
      );
      const byKey = new Map(firsts.map((row) => [`${row.provider}\u0000${row.external_id}`, row]));
      for (const index of duplicates) {
        const row = byKey.get(`${events[index]!.provider}\u0000${events[index]!.external_id}`);
        if (!row) throw new Error('a conflicting event vanished before it could be read');
        results[index] = { event: toSummary(row), duplicate: true, visible: VISIBLE };
      }
    }
    if (this.db.kind === 'postgres' && inserted.length > 0) {
      // Team mode: other instances on this database show these events live too. A NOTIFY
      // payload is capped at 8000 bytes, so it carries ids, not summaries.
      const ids = inserted.map((row) => Number(row.id)).join(',');
      await this.db.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, `${this.instanceId}:${ids}`]).catch(() => {});
    }
    return results as InsertResult[];
  }

  /**
   * The journal's applier (src/core/journal): stores events with the ids and times they were
   * acknowledged with by binary COPY (copy-binary.ts says why), and records the journal position
   * in the same transaction, so a crash between the two cannot lose or repeat a row. A
   * redelivery cannot reach here (the journal dedupes); if one did, the unique index would fail
   * the batch and the journal would isolate that row and drop it, logged.
   */
  async applyJournalBatch(events: readonly JournalEvent[], appliedId: number): Promise<void> {
    if (!Number.isSafeInteger(appliedId)) throw new RangeError(`not a journal position: ${appliedId}`);
    // The position and the sequence move in the statements that store the rows, one transaction.
    const position = `UPDATE journal_state SET applied_id = GREATEST(applied_id, ${appliedId});
       SELECT setval('events_id_seq', GREATEST(${appliedId}, (SELECT last_value FROM events_id_seq)));`;
    if (events.length === 0) {
      await this.db.exec(position);
      return;
    }
    if (!this.db.copyFrom) throw new Error('the journal applies through COPY, which this database client lacks');
    let largest = 0;
    const rows = events.map((event) => {
      largest = Math.max(largest, event.payload.byteLength);
      return journalCopyRow(event);
    });
    await this.db.copyFrom(
      `COPY events (${JOURNAL_INSERT_COLUMNS.join(', ')}) FROM '/dev/blob' WITH (FORMAT binary); ${position}`,
      encodeCopyBinary(JOURNAL_COPY_TYPES, rows),
      largest,
    );
  }

  async journalPosition(): Promise<{ appliedId: number; maxId: number }> {
    const rows = await this.db.query<{ applied_id: number | string | null; max_id: number | string | null; seq: number | string | null }>(
      `SELECT (SELECT applied_id FROM journal_state) AS applied_id, (SELECT max(id) FROM events) AS max_id,
              (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM events_id_seq) AS seq`,
    );
    const row = rows[0];
    return { appliedId: Number(row?.applied_id ?? 0), maxId: Math.max(Number(row?.max_id ?? 0), Number(row?.seq ?? 0)) };
  }

  /** The stored events with these (provider, external_id) keys (the journal's redelivery check). */
  async eventsByKeys(keys: readonly { provider: string; external_id: string }[]): Promise<EventSummary[]> {
    const byProvider = new Map<string, string[]>();
    for (const key of keys) {
      const ids = byProvider.get(key.provider);
      if (ids) ids.push(key.external_id);
      else byProvider.set(key.provider, [key.external_id]);
    }
    const found: EventSummary[] = [];
    // Nearly always one provider: one statement.
    for (const [provider, externalIds] of byProvider) {
      const step = eventsByKeysStep(provider, externalIds);
      for (const row of await this.db.query<SummaryRow>(step.sql, step.params)) found.push(toSummary(row));
    }
    return found;
  }

  async eventKeysAfter(afterId: number, limit: number): Promise<{ id: number; provider: string; external_id: string }[]> {
    const step = eventKeysAfterStep(afterId, limit);
    const rows = await this.db.query<{ id: number | string; provider: string; external_id: string }>(step.sql, step.params);
    return rows.map((row) => ({ ...row, id: Number(row.id) }));
  }

  /**
   * The search indexer's step (search-indexer.ts): copies the search text of the next `limit`
   * events past search_state.indexed_id into event_search and moves the mark, in one statement.
   * Resolves to how many it indexed and the mark.
   */
  async indexSearchBatch(limit = SEARCH_INDEX_BATCH_ROWS): Promise<{ indexed: number; indexedId: number }> {
    const rows = await this.db.query<{ n: number | string; mark: number | string | null }>(
      `WITH src AS (
         SELECT events.id, ${searchDoc('events')} AS doc, events.event_type FROM events
         WHERE events.id > (SELECT search_state.indexed_id FROM search_state) ORDER BY events.id LIMIT $1
       ), ins AS (
         INSERT INTO event_search (event_id, doc, event_type) SELECT src.id, src.doc, src.event_type FROM src ON CONFLICT DO NOTHING
       ), moved AS (
         UPDATE search_state SET indexed_id = GREATEST(search_state.indexed_id, (SELECT max(src.id) FROM src))
         WHERE EXISTS (SELECT 1 FROM src) RETURNING indexed_id
       )
       SELECT (SELECT count(*) FROM src) AS n,
              COALESCE((SELECT indexed_id FROM moved), (SELECT search_state.indexed_id FROM search_state)) AS mark`,
      [limit],
    );
    return { indexed: Number(rows[0]?.n ?? 0), indexedId: Number(rows[0]?.mark ?? 0) };
  }

  /** From the primary key's ends: no count(*). */
  async estimatedEventCount(): Promise<number> {
    const rows = await this.db.query<{ n: number | string | null }>('SELECT max(id) - min(id) + 1 AS n FROM events');
    return Number(rows[0]?.n ?? 0);
  }

  async getEvent(id: number): Promise<EventRecord | null> {
    await this.caughtUp();
    const rows = await this.db.query<DetailRow & { payload: unknown }>(`SELECT ${DETAIL_COLUMNS} FROM events WHERE events.id = $1`, [id]);
    const row = rows[0];
    return row ? toRecord(row, toBytes(row.payload)) : null;
  }

  /**
   * Newest first, keyset-paginated on (received_at, id). Never OFFSET, never count(*). A search
   * reads as SEARCH_BUDGET_MS's comment says: a first window, then the index or a timed walk.
   */
  async listEvents(query: EventQuery): Promise<Page<EventSummary>> {
    if (query.search === undefined || query.search === '') {
      const step = eventListStep(query);
      await this.caughtUp();
      return paginate((await this.run<SummaryRow>(step)).map(toSummary), query.limit);
    }
    searchPatterns(query.search); // refused before waiting for anything
    await this.caughtUp();
    const started = performance.now();
    const tuning = this.options.search;
    const firstRows = tuning?.windowRows ?? searchWindowRows(query.limit);
    const first = await this.searchWindow(query, firstRows, undefined, true);
    const hits = first.hits;
    if (hits.length > query.limit || first.scanned < firstRows) return paginate(hits, query.limit);
    // The walk: each window as large as the time left allows at the rows per ms read so far, and
    // no larger than the matches found so far say the page needs, until it fills or time runs out.
    // While fewer than SEARCH_ESTIMATE_ROWS were read, each window also sharpens the estimate of
    // what the index would give for the rest; once that is small, the index answers the rest.
    let edge = first.edge;
    let scanned = first.scanned;
    let near = first.near;
    let counted = true; // the last window counted trigrams
    for (;;) {
      const rest = { scanned, near, total: Math.max(0, first.total - scanned), unindexed: first.unindexed };
      if (counted && edge && searchUsesIndex(rest, tuning?.indexMaxCandidates)) {
        const older = await this.run<SummaryRow>(searchIndexStep({ ...query, cursor: encodeCursor(edge) }));
        return paginate([...hits, ...older.map(toSummary)], query.limit);
      }
      const elapsed = performance.now() - started;
      const remaining = (tuning?.budgetMs ?? SEARCH_BUDGET_MS) - elapsed;
      if (remaining <= 0 || !edge) break;
      const affordable = 0.9 * (scanned / Math.max(elapsed, 1)) * remaining;
      const needed = hits.length > 0 ? 1.5 * (query.limit + 1 - hits.length) * (scanned / hits.length) : Infinity;
      const rows = tuning?.windowRows ?? Math.min(SEARCH_WALK_MAX_ROWS, Math.max(SEARCH_WALK_MIN_ROWS, Math.floor(Math.min(affordable, needed))));
      counted = scanned < SEARCH_ESTIMATE_ROWS;
      const window = await this.searchWindow(query, rows, edge, counted);
      hits.push(...window.hits);
      if (hits.length > query.limit || window.scanned < rows) return paginate(hits, query.limit);
      edge = window.edge;
      scanned += window.scanned;
      near += window.near;
    }
    if (!edge) return paginate(hits, query.limit);
    return { items: hits, next_cursor: encodeCursor(edge), searched_back_to: edge.received_at };
  }

  private async searchWindow(
    query: EventQuery,
    rows: number,
    from: Cursor | undefined,
    countNear: boolean,
  ): Promise<{ hits: EventSummary[]; scanned: number; near: number; total: number; unindexed: number; edge: Cursor | null }> {
    const result = await this.run<SearchWindowRow>(searchWindowStep(query, rows, from, countNear));
    const stats = result[0];
    return {
      hits: result.filter((row) => row.id !== null).map(toSummary),
      scanned: Number(stats?.scanned ?? 0),
      near: Number(stats?.near ?? 0),
      total: Number(stats?.total ?? 0),
      unindexed: Number(stats?.unindexed ?? 0),
      edge: stats?.edge_received_at && stats.edge_id !== null ? { received_at: stats.edge_received_at, id: Number(stats.edge_id) } : null,
    };
  }

  private run<Row>(step: SqlStep): Promise<Row[]> {
    return this.db.query<Row>(step.sql, step.params, step.settings ? { settings: step.settings } : {});
  }

  /** The oldest event after `after_id` that matches (MCP wait_for_webhook_event's first look). */
  async firstEventAfter(query: { provider?: string; event_type?: string; after_id: number }): Promise<EventSummary | null> {
    const step = firstEventAfterStep(query);
    await this.caughtUp();
    const rows = await this.db.query<SummaryRow>(step.sql, step.params);
    return rows[0] ? toSummary(rows[0]) : null;
  }

  /**
   * Calls `onEvent` for events another instance stored in the same PostgreSQL database
   * (nothing to watch on PGlite, which only one process can open). Resolves to a stop function.
   */
  async watchOtherInstances(onEvent: (event: EventSummary) => void): Promise<() => Promise<void>> {
    if (!this.db.listen) return async () => {};
    return this.db.listen(EVENTS_CHANNEL, (payload) => {
      const [origin, list] = payload.split(':');
      if (origin === this.instanceId || !list) return;
      const ids = list.split(',').map(Number).filter(Number.isSafeInteger);
      this.db
        .query<SummaryRow>(`SELECT ${SUMMARY_COLUMNS} FROM events WHERE events.id = ANY($1::bigint[]) ORDER BY events.id`, [ids])
        .then((rows) => rows.forEach((row) => onEvent(toSummary(row))))
        .catch(() => {});
    });
  }

  /** Whether any stored event or rejection names this provider (one index probe per table). */
  async providerSeen(provider: string): Promise<boolean> {
    await this.caughtUp();
    const rows = await this.run<{ seen: boolean }>(providerSeenStep(provider));
    return rows[0]?.seen === true;
  }

  async latestEventId(): Promise<number> {
    await this.caughtUp();
    const rows = await this.db.query<{ id: number | string | null }>('SELECT max(id) AS id FROM events');
    return Number(rows[0]?.id ?? 0);
  }

  /**
   * Stores a rejection with at most MAX_REJECTION_HEADERS_BYTES of headers (`headers_truncated`
   * says when some were cut). Every few hundred inserts the table is trimmed back under
   * `rejectionCap()`: a flood of forged requests must not grow the data dir until the hourly job.
   */
  async insertRejection(rejection: NewRejection): Promise<Rejection> {
    const { headers, truncated } = storableHeaders(rejection.headers, MAX_REJECTION_HEADERS_BYTES);
    const rows = await this.db.query<RejectionRow>(
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
    if (++this.rejectionsSinceTrim >= rejectionTrimEvery(this.rejectionCap()) && !this.trimming) {
      // The request that made the trim due waits for it: a flood pays for its own clean-up, and
      // once every request of a burst is answered the table is back under the cap.
      this.trimming = this.trimRejectionsWhileDue().finally(() => (this.trimming = null));
      await this.trimming;
    }
    return toRejection(rows[0]!);
  }

  /** Trims until fewer than a trim's worth of rejections arrived meanwhile. */
  private async trimRejectionsWhileDue(): Promise<void> {
    for (;;) {
      const cap = this.rejectionCap();
      if (this.rejectionsSinceTrim < rejectionTrimEvery(cap)) return;
      this.rejectionsSinceTrim = 0;
      try {
        await this.trimRejections(cap);
      } catch {
        return; // the hourly job tries again; a failed trim must not fail the rejection's answer
      }
    }
  }

  /**
   * Keeps the newest rejections (by id, which follows arrival) with room for the next trim's
   * worth under `cap`; batched like retention.
   */
  async trimRejections(cap: number, batchRows = RETENTION_BATCH_ROWS): Promise<number> {
    const top = await this.db.query<{ id: number | string | null }>('SELECT max(id) AS id FROM rejections');
    if (top[0]?.id === null || top[0]?.id === undefined) return 0;
    // Ids are unique, so at most `keep` rows have an id above this bound.
    const keep = cap - rejectionTrimEvery(cap);
    const bound = Number(top[0].id) - keep;
    if (bound <= 0) return 0;
    return this.deleteInBatches(retentionStatements(batchRows).rejectionsUpToId, [bound], batchRows);
  }

  async listRejections(query: { provider?: string; limit: number; cursor?: string }): Promise<Page<Rejection>> {
    const step = rejectionListStep(query);
    const rows = await this.db.query<RejectionRow>(step.sql, step.params);
    return paginate(rows.map(toRejection), query.limit);
  }

  async insertReplay(replay: NewReplay): Promise<ReplayRecord> {
    await this.caughtUp(); // the event it references must be in the table
    const body = replay.response_body ? replay.response_body.subarray(0, MAX_RESPONSE_BODY_BYTES) : null;
    const rows = await this.db.query<ReplayRow>(
      `INSERT INTO replays (event_id, target_url, resigned, delivered, response_status, response_ms, response_headers,
                            response_body, error, requested_by, payload_edited, headers_overridden, request_headers, warning)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::bytea, $9, $10, $11, $12::jsonb, $13::jsonb, $14)
       RETURNING ${REPLAY_COLUMNS}`,
      [
        replay.event_id,
        replay.target_url,
        replay.resigned,
        replay.delivered,
        replay.response_status,
        replay.response_ms,
        replay.response_headers === null ? null : JSON.stringify(storableHeaders(replay.response_headers).headers),
        body,
        storableOrNull(replay.error, MAX_DETAIL_CHARS),
        replay.requested_by,
        replay.payload_edited ?? false,
        JSON.stringify(replay.headers_overridden ?? []),
        replay.request_headers ? JSON.stringify(storableHeaders(replay.request_headers).headers) : null,
        storableOrNull(replay.warning ?? null, MAX_DETAIL_CHARS),
      ],
    );
    return toReplay(rows[0]!);
  }

  /** Replay history of one event, newest first. */
  async listReplays(eventId: number, limit = 100): Promise<ReplayRecord[]> {
    const step = replayListStep(eventId, limit);
    await this.caughtUp();
    const rows = await this.db.query<ReplayRow>(step.sql, step.params);
    return rows.map(toReplay);
  }

  /**
   * The last replay of each of these events (events never replayed are absent): one probe of
   * replays_event_idx per event, so a page of the list costs as many index lookups as rows.
   */
  async lastReplays(eventIds: readonly number[]): Promise<Map<number, LastReplayRecord>> {
    if (eventIds.length === 0) return new Map();
    await this.caughtUp();
    const rows = await this.db.query<LastReplayRecord & { event_id: number | string }>(
      `SELECT ids.event_id, last.delivered, last.response_status, last.requested_by, last.created_at
       FROM unnest($1::bigint[]) AS ids(event_id)
       CROSS JOIN LATERAL (
         SELECT delivered, response_status, requested_by, ${iso('created_at')} AS created_at FROM replays
         WHERE replays.event_id = ids.event_id ORDER BY replays.created_at DESC, replays.id DESC LIMIT 1
       ) AS last`,
      [eventIds],
    );
    return new Map(rows.map(({ event_id, ...last }) => [Number(event_id), last]));
  }

  /** Per-provider activity and the log's totals, bounded (src/core/store/provider-activity.ts). */
  async activity(providers: readonly string[]): Promise<ActivityRecord> {
    await this.caughtUp();
    return readActivity(this.db, providers);
  }

  /** Excerpts around a search's match for one page of events (src/core/store/search-snippets.ts). */
  async searchSnippets(ids: readonly number[], search: string): Promise<Map<number, string>> {
    await this.caughtUp();
    return readSearchSnippets(this.db, ids, search);
  }

  /** Deletes every event (and, by cascade, its replays) and every rejection. */
  async clearEvents(): Promise<void> {
    await this.caughtUp(); // everything acknowledged before the clear goes with it
    this.journal?.forgetStoredKeys();
    await this.db
      .transaction(async (tx) => {
        await tx.exec('DELETE FROM events; DELETE FROM event_search; DELETE FROM rejections;');
      })
      .finally(() => this.journal?.forgetStoredKeys());
  }

  /**
   * Events older than max_age_days, then the oldest beyond max_rows; rejections older than
   * max_age_days, then beyond max_rejections. At most `batchRows` rows per statement, yielding
   * between statements so ingest and queries keep being served meanwhile.
   */
  async applyRetention(policy: RetentionPolicy, batchRows = RETENTION_BATCH_ROWS): Promise<RetentionResult> {
    const sql = retentionStatements(batchRows);
    const maxAgeS = policy.max_age_days * 86_400;
    let events = await this.deleteInBatches(sql.eventsByAge, [maxAgeS], batchRows);
    const cut = await this.nthNewest(policy.max_rows);
    if (cut) events += await this.deleteInBatches(sql.eventsUpTo, [cut.received_at, cut.id], batchRows);
    let rejections = await this.deleteInBatches(sql.rejectionsByAge, [maxAgeS], batchRows);
    rejections += await this.trimRejections(policy.max_rejections, batchRows);
    return { events, rejections };
  }

  /**
   * The (received_at, id) of the row just past the newest `n` (null when there are at most n),
   * walked through the index in bounded steps rather than one OFFSET n.
   */
  private async nthNewest(n: number): Promise<Cursor | null> {
    let after: Cursor | null = null;
    let remaining = n;
    for (;;) {
      const skip = Math.min(remaining, RETENTION_SEEK_ROWS);
      // The row at index `skip` from the newest; after a step, from the row after `after`.
      const step = nthNewestStep(after ? skip - 1 : skip, after);
      const rows = await this.db.query<{ received_at: string; id: number | string }>(step.sql, step.params);
      if (!rows[0]) return null;
      after = { received_at: rows[0].received_at, id: Number(rows[0].id) };
      remaining -= skip;
      if (remaining === 0) return after;
      await yieldToOthers();
    }
  }

  /** Runs a bounded DELETE (answering `n`, rows deleted) until it deletes fewer than `batchRows`, yielding between runs. */
  private async deleteInBatches(sql: string, params: unknown[], batchRows: number): Promise<number> {
    let total = 0;
    for (;;) {
      // Before and after: a redelivery answered from the journal's memory meanwhile is no staler
      // than one answered by a lookup racing the same DELETE.
      this.journal?.forgetStoredKeys();
      const rows = await this.db.query<{ n: number | string }>(sql, params).finally(() => this.journal?.forgetStoredKeys());
      const deleted = Number(rows[0]?.n ?? 0);
      total += deleted;
      if (deleted < batchRows) return total;
      await yieldToOthers();
    }
  }

  /**
   * One batch of an export, oldest first: the events after `after` (keyset on received_at, id)
   * that match `filter`, at most `rows` of them and — past the first — at most `bytes` of
   * payload, and where the next batch starts (`next`; null once every event was read). The
   * caller streams batch after batch, so no export holds every event: the keys and sizes are
   * read first, then the payloads of the batch only.
   *
   * With a search, a batch reads at most `scanRows` events (EXPORT_SEARCH_SCAN_ROWS): a phrase
   * that few events hold must not make one statement read a million rows while deliveries wait
   * for the database. Such a batch may be empty and still have a `next`.
   */
  async exportBatch(
    filter: ExportFilter,
    after: Cursor | null,
    limits: { rows: number; bytes: number; scanRows?: number },
  ): Promise<{ events: EventRecord[]; next: Cursor | null }> {
    await this.caughtUp();
    // The list's filters, with the same meaning (search included), in the opposite order.
    const c = new Conditions();
    addEventFilters(c, filter);
    if (after) c.where.push(`(events.received_at, events.id) > (${c.param(after.received_at)}::timestamptz, ${c.param(after.id)})`);
    if (filter.search !== undefined && filter.search !== '') return this.exportSearchBatch(c, filter.search, limits);
    const keys = await this.db.query<{ id: number | string; received_at: string; payload_size: number | string }>(
      `SELECT events.id, ${iso('events.received_at')} AS received_at, events.payload_size FROM events ${c.sql()}
       ORDER BY events.received_at, events.id LIMIT ${c.param(limits.rows)}`,
      c.params,
    );
    let count = 0;
    let bytes = 0;
    for (const key of keys) {
      bytes += Number(key.payload_size);
      if (count > 0 && bytes > limits.bytes) break;
      count++;
    }
    if (count === 0) return { events: [], next: null };
    // The same range again, now with payloads, up to the last key chosen (an index range scan).
    const last = keys[count - 1]!;
    c.params.pop(); // the LIMIT
    c.where.push(`(events.received_at, events.id) <= (${c.param(last.received_at)}::timestamptz, ${c.param(Number(last.id))})`);
    const rows = await this.db.query<ExportRow>(`SELECT ${EXPORT_COLUMNS} FROM events ${c.sql()} ORDER BY events.received_at, events.id`, c.params);
    const events = rows.map(toExported);
    return { events, next: { received_at: last.received_at, id: Number(last.id) } };
  }

  /** exportBatch with a search: a bounded window of the events after the cursor, then the payloads of its matches. */
  private async exportSearchBatch(
    c: Conditions,
    search: string,
    limits: { rows: number; bytes: number; scanRows?: number },
  ): Promise<{ events: EventRecord[]; next: Cursor | null }> {
    const scanRows = limits.scanRows ?? EXPORT_SEARCH_SCAN_ROWS;
    const match = searchMatch(c, search);
    const window = await this.db.query<{ id: number | string; received_at: string; payload_size: number | string; hit: boolean }>(
      `SELECT events.id, ${iso('events.received_at')} AS received_at, events.payload_size, ${match} AS hit
       FROM (SELECT events.id, events.received_at, events.payload_size, events.event_type, events.payload FROM events ${c.sql()}
             ORDER BY events.received_at, events.id LIMIT ${c.param(scanRows)}) AS events
       ORDER BY events.received_at, events.id`,
      c.params,
    );
    const chosen: number[] = [];
    let bytes = 0;
    let next: Cursor | null = null;
    for (const row of window) {
      if (row.hit) {
        bytes += Number(row.payload_size);
        if (chosen.length >= limits.rows || (chosen.length > 0 && bytes > limits.bytes)) break;
        chosen.push(Number(row.id));
      }
      next = { received_at: row.received_at, id: Number(row.id) };
    }
    // A window that ran out of events, read to its end, leaves nothing after it.
    if (window.length < scanRows && next !== null && next.id === Number(window.at(-1)?.id)) next = null;
    if (chosen.length === 0) return { events: [], next };
    const rows = await this.db.query<ExportRow>(
      `SELECT ${EXPORT_COLUMNS} FROM events WHERE events.id = ANY($1::bigint[]) ORDER BY events.received_at, events.id`,
      [chosen],
    );
    return { events: rows.map(toExported), next };
  }

  /**
   * Stores imported events with origin 'import', keeping their received_at. An event whose
   * (provider, external_id) is already stored is a duplicate; so is one without an external_id
   * whose provider, received_at and payload match a stored one (importing a file twice adds
   * nothing). Returns how many were stored. One statement per call: the caller batches.
   */
  async importEvents(events: readonly ImportedEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    if (this.journal) return this.importThroughJournal(this.journal, events);
    const columns = [...EVENT_INSERT_COLUMNS, 'received_at'] as const;
    const types: Record<(typeof columns)[number], string> = {
      provider: 'text', family: 'text', event_type: 'text', external_id: 'text', trust_mode: 'text', verified: 'boolean',
      verify_detail: 'text', content_type: 'text', headers: 'jsonb', payload: 'bytea', payload_size: 'integer',
      source_ip: 'text', origin: 'text', received_at: 'timestamptz',
    };
    const params: unknown[] = [];
    const tuples = events.map((event, index) => {
      const values: Record<(typeof columns)[number], unknown> = {
        ...storableEvent(event),
        received_at: event.received_at,
        headers: JSON.stringify(event.headers),
        payload_size: event.payload.byteLength,
        origin: 'import',
      };
      params.push(index);
      const placeholders = [`$${params.length}::integer`, ...columns.map((column) => `$${params.push(values[column])}::${types[column]}`)];
      return `(${placeholders.join(', ')})`;
    });
    const rows = await this.db.query<{ id: number | string }>(
      `WITH ins AS (
       INSERT INTO events (${columns.join(', ')})
       SELECT ${columns.map((column) => `v.${column}`).join(', ')}
       FROM (VALUES ${tuples.join(', ')}) AS v(ordinal, ${columns.join(', ')})
       WHERE v.external_id IS NOT NULL OR NOT EXISTS (
         SELECT 1 FROM events e
         WHERE e.provider = v.provider AND e.received_at = v.received_at AND e.external_id IS NULL AND e.payload = v.payload)
       ORDER BY v.ordinal
       ON CONFLICT (provider, external_id) WHERE external_id IS NOT NULL DO NOTHING
       RETURNING id, payload, event_type
       ), indexed AS (
         INSERT INTO event_search (event_id, doc, event_type) SELECT ins.id, ${searchDoc('ins')}, ins.event_type FROM ins ON CONFLICT DO NOTHING
       )
       SELECT id FROM ins`,
      params,
    );
    return rows.length;
  }

  /**
   * importEvents on the embedded database: the same dedupe rules, with ids from the journal (the
   * only allocator there). Resolves once the stored events are visible.
   */
  private async importThroughJournal(journal: EventJournal, events: readonly ImportedEvent[]): Promise<number> {
    await this.caughtUp();
    const keyless = events.flatMap((event, ordinal) => (event.external_id === null ? [{ event, ordinal }] : []));
    const present = new Set<number>();
    if (keyless.length > 0) {
      const rows = await this.db.query<{ ordinal: number }>(
        // Payloads as base64 text: PGlite's array serializer takes no bytes.
        `SELECT v.ordinal FROM unnest($1::integer[], $2::text[], $3::timestamptz[], $4::text[]) AS v(ordinal, provider, received_at, payload)
         WHERE EXISTS (SELECT 1 FROM events e WHERE e.provider = v.provider AND e.received_at = v.received_at
                       AND e.external_id IS NULL AND e.payload = decode(v.payload, 'base64'))`,
        [
          keyless.map((item) => item.ordinal),
          keyless.map((item) => item.event.provider),
          keyless.map((item) => item.event.received_at),
          keyless.map((item) => Buffer.from(item.event.payload).toString('base64')),
        ],
      );
      for (const row of rows) present.add(Number(row.ordinal));
    }
    const results = await Promise.all(
      events.flatMap((event, ordinal) =>
        present.has(ordinal) ? [] : [journal.submit({ ...storableEvent(event), received_at: normalizedTime(event.received_at), origin: 'import' })],
      ),
    );
    const stored = results.filter((result) => !result.duplicate);
    await Promise.all(stored.map((result) => result.visible));
    return stored.length;
  }

  /** Refreshes planner statistics; PGlite never runs autoanalyze (STACK.md). */
  async analyze(): Promise<void> {
    await this.db.exec('ANALYZE events; ANALYZE rejections; ANALYZE replays;');
  }

  /**
   * Gives the space of deleted rows back for reuse, after retention deleted many. The embedded
   * database has no autovacuum: without a VACUUM the space of a deleted row is never reused, so a
   * log held at max_rows by retention would still grow by every new event, for good
   * (test/core/retention-space.test.ts). VACUUM also refreshes the planner's statistics and
   * freezes old rows. On PostgreSQL autovacuum does this; there it is only ANALYZE.
   * Each table's VACUUM holds the database for its duration (up to ~17 s for the first one of a
   * million events): deliveries are still answered from the journal meanwhile; reads wait, for as
   * long as it takes (EventJournal.maintenance), instead of failing as a stuck database.
   */
  async reclaimSpace(): Promise<void> {
    if (this.db.kind !== 'pglite') return this.analyze();
    const vacuum = async () => {
      // One statement each: VACUUM cannot run inside a transaction block. The search text is only
      // ever read through its indexes: no statistics to refresh there.
      for (const statement of ['VACUUM (ANALYZE) events', 'VACUUM event_search', 'VACUUM (ANALYZE) rejections', 'VACUUM (ANALYZE) replays']) {
        await this.db.exec(statement);
      }
    };
    await (this.journal ? this.journal.maintenance(vacuum) : vacuum());
  }

  /** Waits for queued inserts (and the journal's tail), then closes the database. */
  async close(): Promise<void> {
    this.closed = true;
    await this.journal?.close();
    while (this.flushScheduled || this.flushing || this.pending.length > 0) {
      if (this.flushing) await this.flushing;
      else await new Promise((resolve) => setImmediate(resolve));
    }
    await this.trimming;
    await this.db.close();
  }
}

/** Lets queued inserts and queries reach the database between two bounded statements. */
const yieldToOthers = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

/** An ISO time as the database prints it (microseconds), so a summary matches what a read returns. */
function normalizedTime(text: string): string {
  const match = ISO_UTC.exec(text);
  if (match) return `${match[1]}.${(match[2] ?? '').padEnd(6, '0')}Z`;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new SwitchboardError('invalid_argument', `received_at is not a time: ${JSON.stringify(text)}`);
  return new Date(ms).toISOString().replace('Z', '000Z');
}

export function storableEvent(event: NewEvent): NewEvent {
  return {
    ...event,
    event_type: storableOrNull(event.event_type, MAX_EVENT_TYPE_CHARS),
    external_id: storableOrNull(event.external_id, MAX_EXTERNAL_ID_CHARS),
    verify_detail: storableOrNull(event.verify_detail, MAX_DETAIL_CHARS),
    content_type: storableOrNull(event.content_type, MAX_CONTENT_TYPE_CHARS),
    headers: storableHeaders(event.headers).headers,
    source_ip: storableOrNull(event.source_ip, MAX_CONTENT_TYPE_CHARS),
  };
}

/** Collects WHERE conditions and their numbered parameters. */
class Conditions {
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
function addEventFilters(
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

/**
 * A search as one predicate on `events` (the export's, which reads every event anyway): the
 * search text event_search holds, or for an event the indexer has not reached, the same text
 * computed from its payload.
 */
function searchMatch(c: Conditions, search: string): string {
  const { payload, eventType } = searchPatterns(search);
  const text = `COALESCE((SELECT event_search.doc FROM event_search WHERE event_search.event_id = events.id), ${searchDoc('events')})`;
  return `(${text} LIKE ${c.param(payload)} OR events.event_type ILIKE ${c.param(eventType)})`;
}

/** The list's filters, after_id and cursor included (a search walk's `from` replaces the cursor). */
function listConditions(query: EventQuery, from?: Cursor): Conditions {
  const c = new Conditions();
  addEventFilters(c, { ...query, since: query.since_time, until: query.until_time });
  if (query.after_id !== undefined) c.add((p) => `events.id > ${p}`, query.after_id);
  if (from) c.where.push(`(events.received_at, events.id) < (${c.param(from.received_at)}::timestamptz, ${c.param(from.id)})`);
  else if (query.cursor !== undefined) addCursor(c, 'events', 'received_at', query.cursor);
  return c;
}

/**
 * The list without a search: one statement. Every filter the API and MCP accept has an index
 * (migrations/0001–0003; test/core/store-plans.test.ts EXPLAINs each combination).
 */
export function eventListStep(query: EventQuery): SqlStep {
  const c = listConditions(query);
  const limit = c.param(query.limit + 1);
  return { sql: `SELECT ${SUMMARY_COLUMNS} FROM events ${c.sql()} ${NEWEST_FIRST} LIMIT ${limit}`, params: c.params };
}

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
  near: number | string;
  edge_received_at: string | null;
  edge_id: number | string | null;
  /** Events in the table (from the primary key's ends) and those the search indexer has not reached. */
  total: number | string | null;
  unindexed: number | string | null;
}

/**
 * One window of a search (steps 1 and 3 in SEARCH_BUDGET_MS's comment): the newest `rows` rows
 * that pass the other filters — after `from` when a walk continues — each matched against its
 * search text. Answers the matches (at most limit + 1, newest first) and, on every row, what the
 * window read; with no match, one row of that alone (its event columns null).
 */
export function searchWindowStep(query: EventQuery, rows: number, from?: Cursor, countNear = from === undefined): SqlStep {
  const c = listConditions(query, from);
  const { payload, eventType, trigrams } = searchPatterns(query.search ?? '');
  const filtered = c.sql();
  const payloadLike = c.param(payload);
  const typeLike = c.param(eventType);
  // Only windows that estimate (searchUsesIndex) count; the rest of a walk need not.
  const near = countNear ? trigrams.map((trigram) => `text.doc LIKE ${c.param(trigram)}`).join(' AND ') : 'false';
  const limit = c.param(query.limit + 1);
  const windowRows = c.param(rows);
  return {
    sql: `WITH win AS MATERIALIZED (
            SELECT events.id, events.received_at, events.event_type FROM events ${filtered} ${NEWEST_FIRST} LIMIT ${windowRows}
          ), seen AS MATERIALIZED (
            SELECT win.id, win.received_at, (text.doc LIKE ${payloadLike} OR win.event_type ILIKE ${typeLike}) AS hit, (${near}) AS near
            FROM win LEFT JOIN event_search ON event_search.event_id = win.id
            CROSS JOIN LATERAL (SELECT COALESCE(event_search.doc, (SELECT ${searchDoc('unindexed')} FROM events AS unindexed WHERE unindexed.id = win.id)) AS doc) AS text
          ), edge AS (
            SELECT min(win.received_at) AS received_at FROM win
          ), stats AS (
            SELECT count(*) AS scanned, count(*) FILTER (WHERE seen.near) AS near FROM seen
          )
          SELECT stats.scanned, stats.near, ${iso('edge.received_at')} AS edge_received_at,
                 (SELECT min(win.id) FROM win WHERE win.received_at = edge.received_at) AS edge_id,
                 (SELECT max(all_events.id) - min(all_events.id) + 1 FROM events AS all_events) AS total,
                 GREATEST(0, (SELECT max(all_events.id) FROM events AS all_events) - (SELECT search_state.indexed_id FROM search_state)) AS unindexed,
                 hits.*
          FROM stats CROSS JOIN edge LEFT JOIN LATERAL (
            SELECT ${SUMMARY_COLUMNS}, events.received_at AS sort_at FROM events
            WHERE events.id = ANY(ARRAY(SELECT seen.id FROM seen WHERE seen.hit ORDER BY seen.received_at DESC, seen.id DESC LIMIT ${limit}))
          ) AS hits ON true
          ORDER BY hits.sort_at DESC, hits.id DESC`,
    params: c.params,
  };
}

/**
 * A search's step 2: the candidates of the trigram index of the search text (event_search), the
 * events the search indexer has not reached yet (read directly; a short tail while it keeps up)
 * and event types — with plain index scans disabled, so the planner cannot walk every row in
 * received_at order looking for a rare word.
 */
export function searchIndexStep(query: EventQuery): SqlStep {
  const c = listConditions(query);
  const filtered = c.sql();
  const { payload, eventType } = searchPatterns(query.search ?? '');
  const payloadLike = c.param(payload);
  const typeLike = c.param(eventType);
  const limit = c.param(query.limit + 1);
  const candidates = `SELECT event_search.event_id FROM event_search WHERE event_search.doc LIKE ${payloadLike}
    UNION ALL SELECT event_search.event_id FROM event_search WHERE event_search.event_type ILIKE ${typeLike}
    UNION ALL SELECT tail.id FROM events AS tail
      WHERE tail.id > (SELECT search_state.indexed_id FROM search_state)
        AND (${searchDoc('tail')} LIKE ${payloadLike} OR tail.event_type ILIKE ${typeLike})`;
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

/**
 * LIKE patterns for a search, lowercased as event_search.doc is (searchDoc): the payload side is
 * matched against encode(payload, 'escape') (bytes ≥ 0x80 and NUL as \ooo, backslash doubled),
 * so the search is escaped the same way and non-ASCII text matches byte for byte; ASCII letters
 * match case-insensitively. `trigrams`: a few of the search's trigrams (3 letters or digits in a
 * row, as pg_trgm indexes them), as patterns, for the windows' estimate of how much the index
 * narrows the search down.
 *
 * A search without 3 letters or digits in a row gives the trigram index nothing to look up: it
 * would read every event, so it is refused rather than answered slowly.
 */
export function searchPatterns(search: string): { payload: string; eventType: string; trigrams: string[] } {
  if (search.length > MAX_SEARCH_CHARS) {
    throw new SwitchboardError('invalid_argument', `search is at most ${MAX_SEARCH_CHARS} characters (got ${search.length})`);
  }
  const escaped = escapeBytes(search).toLowerCase();
  const all = new Set<string>();
  for (const run of escaped.match(/[a-z0-9]{3,}/g) ?? []) for (let i = 0; i + 3 <= run.length; i++) all.add(run.slice(i, i + 3));
  if (all.size === 0) {
    throw new SwitchboardError(
      'invalid_argument',
      `search needs at least 3 letters or digits in a row, e.g. a word or an id (${JSON.stringify(search)} would have to read every event)`,
    );
  }
  const like = (text: string) => `%${text.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
  const distinct = [...all];
  const step = Math.max(1, distinct.length / SEARCH_TRIGRAMS_COUNTED);
  const trigrams: string[] = [];
  for (let i = 0; i < distinct.length && trigrams.length < SEARCH_TRIGRAMS_COUNTED; i += step) trigrams.push(like(distinct[Math.floor(i)]!));
  return { payload: like(escaped), eventType: like(search.replaceAll('\u0000', '')), trigrams };
}

/** PostgreSQL's encode(bytes, 'escape') of the text's UTF-8 bytes. */
function escapeBytes(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    if (byte === 0x5c) out += '\\\\';
    else if (byte === 0 || byte >= 0x80) out += `\\${byte.toString(8).padStart(3, '0')}`;
    else out += String.fromCharCode(byte);
  }
  return out;
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

const REJECTION_COLUMNS = `rejections.id, rejections.provider, rejections.reason, rejections.hint, rejections.headers,
  rejections.headers_truncated, rejections.body_size, rejections.body_sha256, rejections.source_ip,
  ${iso('rejections.received_at')} AS received_at`;

type RejectionRow = Omit<Rejection, 'id'> & { id: number | string };

function toRejection(row: RejectionRow): Rejection {
  return {
    ...row,
    id: Number(row.id),
    headers: asHeaders(row.headers),
    body_size: Number(row.body_size),
  };
}

const REPLAY_COLUMNS = `replays.id, replays.event_id, replays.target_url, replays.resigned, replays.delivered, replays.response_status,
  replays.response_ms, replays.response_headers, replays.response_body, replays.error, replays.requested_by, replays.payload_edited,
  replays.headers_overridden, replays.request_headers, replays.warning, ${iso('replays.created_at')} AS created_at`;

type ReplayRow = Omit<ReplayRecord, 'id' | 'event_id'> & { id: number | string; event_id: number | string };

function toReplay(row: ReplayRow): ReplayRecord {
  return {
    ...row,
    id: Number(row.id),
    event_id: Number(row.event_id),
    response_headers: row.response_headers === null ? null : asHeaders(row.response_headers),
    headers_overridden: asList(row.headers_overridden),
    request_headers: row.request_headers === null || row.request_headers === undefined ? null : asHeaders(row.request_headers),
    warning: row.warning ?? null,
    response_body: row.response_body === null ? null : toBytes(row.response_body),
  };
}

/** `LIKE` reads `\`, `%` and `_` as syntax; user text matches them literally. */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function asList(value: unknown): string[] {
  const list: unknown = typeof value === 'string' ? JSON.parse(value) : value;
  return Array.isArray(list) ? list.map(String) : [];
}

function paginate<T extends { received_at: string; id: number }>(rows: T[], limit: number): Page<T> {
  if (rows.length <= limit) return { items: rows };
  const items = rows.slice(0, limit);
  const last = items[items.length - 1]!;
  const cursor: Cursor = { received_at: last.received_at, id: last.id };
  return { items, next_cursor: encodeCursor(cursor) };
}
