import type { EventSummary, Family, Origin, Rejection, Replay, TrustMode } from '../../shared/events.js';
import { SwitchboardError } from '../errors.js';
import { decodeCursor, encodeCursor, type Cursor } from './cursor.js';
import type { SqlClient } from './sql-client.js';

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

export interface EventQuery {
  provider?: string;
  event_type?: string;
  trust_mode?: TrustMode;
  origin?: Origin;
  external_id?: string;
  /** Free text, matched against the raw payload bytes. */
  search?: string;
  /** Only events received at or after this ISO time. */
  since_time?: string;
  /** Only events with a greater id. */
  after_id?: number;
  limit: number;
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  next_cursor?: string;
}

export interface RetentionPolicy {
  max_age_days: number;
  max_rows: number;
}

export const MAX_BATCH_ROWS = 256;
/** NOTIFY channel on which instances sharing a PostgreSQL event log announce new events. */
export const EVENTS_CHANNEL = 'switchboard_events';
export const MAX_RESPONSE_BODY_BYTES = 64 * 1024;

/** Exact stored time as ISO-8601 UTC with microseconds. */
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

const SUMMARY_COLUMNS = `id, provider, family, event_type, external_id, origin, trust_mode, verified, payload_size, ${iso('received_at')} AS received_at`;
const DETAIL_COLUMNS = `${SUMMARY_COLUMNS}, verify_detail, content_type, source_ip, headers, payload`;
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

type SummaryRow = Omit<EventSummary, 'id'> & { id: number | string | bigint };

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

export class EventStore {
  private readonly pending: PendingInsert[] = [];
  private flushScheduled = false;
  private flushing: Promise<void> | null = null;
  private closed = false;
  /** Tells this instance's own notifications apart from other instances'. */
  private readonly instanceId = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;

  constructor(private readonly db: SqlClient) {}

  get databaseKind(): SqlClient['kind'] {
    return this.db.kind;
  }

  /**
   * Group commit: inserts that arrive in the same event-loop turn become one multi-row INSERT
   * (STACK.md: ~3× the throughput of a statement per request, and a fixed timer window is
   * slower at every concurrency). The promise settles only once the row is committed, so the
   * receiver can answer after storage (store-then-ack).
   */
  insertEvent(event: NewEvent): Promise<InsertResult> {
    if (this.closed) return Promise.reject(new SwitchboardError('storage_unavailable', 'the event store is closed'));
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
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, MAX_BATCH_ROWS);
      try {
        const results = await this.insertBatch(batch.map((item) => item.event));
        batch.forEach((item, index) => item.resolve(results[index]!));
      } catch (error) {
        const failure = new SwitchboardError('storage_unavailable', `storing events failed: ${(error as Error).message}`, { cause: error });
        for (const item of batch) item.reject(failure);
      }
    }
  }

  private async insertBatch(events: NewEvent[]): Promise<InsertResult[]> {
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
    const inserted = await this.db.query<SummaryRow>(
      `INSERT INTO events (${EVENT_INSERT_COLUMNS.join(', ')}) VALUES ${tuples.join(', ')}
       ON CONFLICT (provider, external_id) WHERE external_id IS NOT NULL DO NOTHING
       RETURNING ${SUMMARY_COLUMNS}`,
      params,
    );
    const results: (InsertResult | undefined)[] = [];
    const duplicates: number[] = [];
    let next = 0;
    events.forEach((event, index) => {
      const row = inserted[next];
      if (row && row.provider === event.provider && row.external_id === event.external_id) {
        results[index] = { event: toSummary(row), duplicate: false };
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
        `SELECT ${SUMMARY_COLUMNS} FROM events WHERE (provider, external_id) IN (${pairs.join(', ')})`,
        keys,
      );
      const byKey = new Map(firsts.map((row) => [`${row.provider}\u0000${row.external_id}`, row]));
      for (const index of duplicates) {
        const row = byKey.get(`${events[index]!.provider}\u0000${events[index]!.external_id}`);
        if (!row) throw new Error('a conflicting event vanished before it could be read');
        results[index] = { event: toSummary(row), duplicate: true };
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

  async getEvent(id: number): Promise<EventRecord | null> {
    const rows = await this.db.query<SummaryRow & Omit<EventRecord, keyof EventSummary>>(
      `SELECT ${DETAIL_COLUMNS} FROM events WHERE id = $1`,
      [id],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      ...toSummary(row),
      verify_detail: row.verify_detail,
      content_type: row.content_type,
      source_ip: row.source_ip,
      headers: asHeaders(row.headers),
      payload: toBytes(row.payload),
    };
  }

  /** Newest first, keyset-paginated on (received_at, id). Never OFFSET, never count(*). */
  async listEvents(query: EventQuery): Promise<Page<EventSummary>> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (sql: (placeholder: string) => string, value: unknown) => {
      params.push(value);
      where.push(sql(`$${params.length}`));
    };
    if (query.provider !== undefined) add((p) => `provider = ${p}`, query.provider);
    if (query.event_type !== undefined) add((p) => `event_type = ${p}`, query.event_type);
    if (query.trust_mode !== undefined) add((p) => `trust_mode = ${p}`, query.trust_mode);
    if (query.origin !== undefined) add((p) => `origin = ${p}`, query.origin);
    if (query.external_id !== undefined) add((p) => `external_id = ${p}`, query.external_id);
    if (query.since_time !== undefined) add((p) => `received_at >= ${p}::timestamptz`, query.since_time);
    if (query.after_id !== undefined) add((p) => `id > ${p}`, query.after_id);
    if (query.search !== undefined && query.search !== '') {
      params.push(query.search, `%${query.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
      const [raw, pattern] = [`$${params.length - 1}`, `$${params.length}`];
      // Bytes first (exact, any encoding); then a case-insensitive match on the ASCII view.
      where.push(
        `(position(convert_to(${raw}, 'UTF8') in payload) > 0 OR encode(payload, 'escape') ILIKE ${pattern} OR event_type ILIKE ${pattern})`,
      );
    }
    if (query.cursor !== undefined) {
      const cursor = decodeCursor(query.cursor);
      params.push(cursor.received_at, cursor.id);
      where.push(`(received_at, id) < ($${params.length - 1}::timestamptz, $${params.length})`);
    }
    params.push(query.limit + 1);
    const rows = await this.db.query<SummaryRow>(
      `SELECT ${SUMMARY_COLUMNS} FROM events ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY received_at DESC, id DESC LIMIT $${params.length}`,
      params,
    );
    return paginate(rows.map(toSummary), query.limit);
  }

  /** The oldest event after `after_id` that matches (MCP wait_for_webhook_event's first look). */
  async firstEventAfter(query: { provider?: string; event_type?: string; after_id: number }): Promise<EventSummary | null> {
    const params: unknown[] = [query.after_id];
    const where = ['id > $1'];
    if (query.provider !== undefined) where.push(`provider = $${params.push(query.provider)}`);
    if (query.event_type !== undefined) where.push(`event_type = $${params.push(query.event_type)}`);
    const rows = await this.db.query<SummaryRow>(`SELECT ${SUMMARY_COLUMNS} FROM events WHERE ${where.join(' AND ')} ORDER BY id LIMIT 1`, params);
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
        .query<SummaryRow>(`SELECT ${SUMMARY_COLUMNS} FROM events WHERE id = ANY($1::bigint[]) ORDER BY id`, [ids])
        .then((rows) => rows.forEach((row) => onEvent(toSummary(row))))
        .catch(() => {});
    });
  }

  /** Whether any stored event or rejection names this provider (one index probe per table). */
  async providerSeen(provider: string): Promise<boolean> {
    const rows = await this.db.query<{ seen: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM events WHERE provider = $1) OR EXISTS (SELECT 1 FROM rejections WHERE provider = $1) AS seen`,
      [provider],
    );
    return rows[0]?.seen === true;
  }

  async latestEventId(): Promise<number> {
    const rows = await this.db.query<{ id: number | string | null }>('SELECT max(id) AS id FROM events');
    return Number(rows[0]?.id ?? 0);
  }

  async insertRejection(rejection: NewRejection): Promise<Rejection> {
    const rows = await this.db.query<RejectionRow>(
      `INSERT INTO rejections (provider, reason, hint, headers, headers_truncated, body_size, body_sha256, source_ip)
       VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8)
       RETURNING ${REJECTION_COLUMNS}`,
      [
        rejection.provider,
        rejection.reason,
        rejection.hint,
        JSON.stringify(rejection.headers),
        rejection.headers_truncated ?? false,
        rejection.body_size,
        rejection.body_sha256,
        rejection.source_ip,
      ],
    );
    return toRejection(rows[0]!);
  }

  async listRejections(query: { provider?: string; limit: number; cursor?: string }): Promise<Page<Rejection>> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (query.provider !== undefined) {
      params.push(query.provider);
      where.push(`provider = $${params.length}`);
    }
    if (query.cursor !== undefined) {
      const cursor = decodeCursor(query.cursor);
      params.push(cursor.received_at, cursor.id);
      where.push(`(received_at, id) < ($${params.length - 1}::timestamptz, $${params.length})`);
    }
    params.push(query.limit + 1);
    const rows = await this.db.query<RejectionRow>(
      `SELECT ${REJECTION_COLUMNS}
       FROM rejections ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY received_at DESC, id DESC LIMIT $${params.length}`,
      params,
    );
    return paginate(rows.map(toRejection), query.limit);
  }

  async insertReplay(replay: NewReplay): Promise<ReplayRecord> {
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
        replay.response_headers === null ? null : JSON.stringify(replay.response_headers),
        body,
        replay.error,
        replay.requested_by,
        replay.payload_edited ?? false,
        JSON.stringify(replay.headers_overridden ?? []),
        replay.request_headers ? JSON.stringify(replay.request_headers) : null,
        replay.warning ?? null,
      ],
    );
    return toReplay(rows[0]!);
  }

  /** Replay history of one event, newest first. */
  async listReplays(eventId: number, limit = 100): Promise<ReplayRecord[]> {
    const rows = await this.db.query<ReplayRow>(
      `SELECT ${REPLAY_COLUMNS} FROM replays WHERE event_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
      [eventId, limit],
    );
    return rows.map(toReplay);
  }

  /** Deletes every event (and, by cascade, its replays) and every rejection. */
  async clearEvents(): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.exec('DELETE FROM events; DELETE FROM rejections;');
    });
  }

  /** Age first, then the oldest rows beyond the cap. Returns how many events were deleted. */
  async applyRetention(policy: RetentionPolicy): Promise<number> {
    const byAge = await this.db.query<{ n: number | string }>(
      `WITH gone AS (DELETE FROM events WHERE received_at < now() - make_interval(secs => $1) RETURNING 1)
       SELECT count(*) AS n FROM gone`,
      [policy.max_age_days * 86_400],
    );
    await this.db.query(`DELETE FROM rejections WHERE received_at < now() - make_interval(secs => $1)`, [policy.max_age_days * 86_400]);
    // The cut-off row is found through the (received_at, id) index; the delete is then a range.
    const cut = await this.db.query<{ received_at: string; id: number | string }>(
      `SELECT ${iso('received_at')} AS received_at, id FROM events ORDER BY received_at DESC, id DESC OFFSET $1 LIMIT 1`,
      [policy.max_rows],
    );
    let byCap = 0;
    if (cut[0]) {
      const rows = await this.db.query<{ n: number | string }>(
        `WITH gone AS (DELETE FROM events WHERE (received_at, id) <= ($1::timestamptz, $2) RETURNING 1) SELECT count(*) AS n FROM gone`,
        [cut[0].received_at, cut[0].id],
      );
      byCap = Number(rows[0]?.n ?? 0);
    }
    return Number(byAge[0]?.n ?? 0) + byCap;
  }

  /** Refreshes planner statistics; PGlite never runs autoanalyze (STACK.md). */
  async analyze(): Promise<void> {
    await this.db.exec('ANALYZE events; ANALYZE rejections; ANALYZE replays;');
  }

  /** Waits for queued inserts, then closes the database. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.flushScheduled || this.flushing || this.pending.length > 0) {
      if (this.flushing) await this.flushing;
      else await new Promise((resolve) => setImmediate(resolve));
    }
    await this.db.close();
  }
}

const REJECTION_COLUMNS = `id, provider, reason, hint, headers, headers_truncated, body_size, body_sha256, source_ip, ${iso('received_at')} AS received_at`;

type RejectionRow = Omit<Rejection, 'id'> & { id: number | string };

function toRejection(row: RejectionRow): Rejection {
  return {
    ...row,
    id: Number(row.id),
    headers: asHeaders(row.headers),
    body_size: Number(row.body_size),
  };
}

const REPLAY_COLUMNS = `id, event_id, target_url, resigned, delivered, response_status, response_ms, response_headers,
  response_body, error, requested_by, payload_edited, headers_overridden, request_headers, warning, ${iso('created_at')} AS created_at`;

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
