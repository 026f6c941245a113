import type { EventSummary, Origin, Replay, TrustMode } from '../../shared/events.js';
import type { NewEvent, NewJournalEvent } from '../new-event.js';

/**
 * The store's row types and the ports it is built on. Imports nothing of the store, so every
 * module — the store's own and the faces — can name them without pulling the store in. (The
 * event before it is stored, NewEvent, is src/core/new-event.ts: the journal names it too.)
 */

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
  chaos?: Replay['chaos'];
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
   * Case-insensitive substring of the payload's text (its first SEARCH_PAYLOAD_BYTES, UTF-8
   * decoded) or of the event type. Needs 3 letters or digits in a row.
   */
  search?: string;
  /** Only events received at or after this ISO time. */
  since_time?: string;
  /** Only events received before this ISO time. */
  until_time?: string;
  /** Only events with a greater id. */
  after_id?: number;
  /** true: only events the shape tracker marked as drifting from their type's shape; false: only the others (DESIGN §16). */
  drift?: boolean;
  limit: number;
  cursor?: string;
}

/** One statement of a list query, exactly as the store sends it (tests EXPLAIN these). */
export interface SqlStep {
  sql: string;
  params: unknown[];
  /** Planner settings applied with SET LOCAL to this statement alone (SqlClient's QueryOptions). */
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

/** How far the search index reaches while it is being built (DESIGN §17). */
export interface IndexProgress {
  indexed: number;
  total: number;
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
  /** Beside searched_back_to while the search index is incomplete: why older events search slowly. */
  index_progress?: IndexProgress;
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

/**
 * What the store needs of the ingest journal (src/core/journal implements it): on the embedded
 * database inserts are acknowledged from the journal and every read waits for it. The journal
 * depends on the store, never the other way round.
 */
export interface JournalPort {
  submit(event: NewJournalEvent): Promise<InsertResult>;
  /** Resolves once every event acknowledged before the call is visible to reads. */
  barrier(): Promise<void>;
  /** Runs work that holds the database longer than a read would wait (VACUUM): reads wait it out. */
  maintenance<T>(work: () => Promise<T>): Promise<T>;
  /** Events were deleted: redeliveries are checked in the database again, not answered from memory. */
  forgetStoredKeys(): void;
}
