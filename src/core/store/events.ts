import type { EventSummary } from '../../shared/events.js';
import { SwitchboardError } from '../errors.js';
import { CASTS, DETAIL_COLUMNS, EVENT_INSERT_COLUMNS, SUMMARY_COLUMNS, searchDoc, toBytes, toRecord, toSummary, type DetailRow, type SummaryRow } from './columns.js';
import type { StoreContext } from './context.js';
import { searchEvents, searchPatterns, type SearchTuning } from './search.js';
import { eventListStep, firstEventAfterStep, paginate, providerSeenStep } from './sql-builders.js';
import { storableEvent } from './storable.js';
import type { TeamNotify } from './team-notify.js';
import type { NewEvent } from '../new-event.js';
import type { EventQuery, EventRecord, InsertResult, Page } from './types.js';

/**
 * The event log itself: storing a delivery (through the journal on the embedded database, by
 * group commit on PostgreSQL) and reading it back — one event, a page of the list, a search.
 */

export const MAX_BATCH_ROWS = 256;

interface PendingInsert {
  event: NewEvent;
  resolve: (result: InsertResult) => void;
  reject: (error: unknown) => void;
}

const VISIBLE = Promise.resolve(true);

export class Events {
  private readonly pending: PendingInsert[] = [];
  private flushScheduled = false;
  private flushing: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly ctx: StoreContext,
    private readonly team: TeamNotify,
    private readonly searchTuning?: SearchTuning,
  ) {}

  /**
   * Stores an event: acknowledged from the journal on the embedded database (DESIGN §5); else by
   * group commit — inserts that arrive in the same event-loop turn become one multi-row INSERT
   * (STACK.md: ~3× the throughput of a statement per request, and a fixed timer window is
   * slower at every concurrency). The promise settles only once the row is committed, so the
   * receiver can answer after storage (store-then-ack).
   */
  insert(event: NewEvent): Promise<InsertResult> {
    if (this.closed) return Promise.reject(new SwitchboardError('storage_unavailable', 'the event store is closed'));
    if (this.ctx.journal) return this.ctx.journal.submit({ ...storableEvent(event), origin: event.origin ?? 'provider' });
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
    const inserted = await this.ctx.db.query<SummaryRow>(
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
      const firsts = await this.ctx.db.query<SummaryRow>(
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
    await this.team.announce(inserted.map((row) => Number(row.id)));
    return results as InsertResult[];
  }

  async get(id: number): Promise<EventRecord | null> {
    await this.ctx.caughtUp();
    const rows = await this.ctx.db.query<DetailRow & { payload: unknown }>(`SELECT ${DETAIL_COLUMNS} FROM events WHERE events.id = $1`, [id]);
    const row = rows[0];
    return row ? toRecord(row, toBytes(row.payload)) : null;
  }

  /** These events with their payloads, in no particular order; ids not stored are absent. */
  async getMany(ids: readonly number[]): Promise<EventRecord[]> {
    if (ids.length === 0) return [];
    await this.ctx.caughtUp();
    const rows = await this.ctx.db.query<DetailRow & { payload: unknown }>(`SELECT ${DETAIL_COLUMNS} FROM events WHERE events.id = ANY($1::bigint[])`, [ids]);
    return rows.map((row) => toRecord(row, toBytes(row.payload)));
  }

  /**
   * Newest first, keyset-paginated on (received_at, id). Never OFFSET, never count(*). A search
   * reads as search.ts says: a first window, then the index or a timed walk.
   */
  async list(query: EventQuery): Promise<Page<EventSummary>> {
    if (query.search === undefined || query.search === '') {
      const step = eventListStep(query);
      await this.ctx.caughtUp();
      return paginate((await this.ctx.run<SummaryRow>(step)).map(toSummary), query.limit);
    }
    searchPatterns(query.search); // refused before waiting for anything
    await this.ctx.caughtUp();
    return searchEvents(this.ctx, query, this.searchTuning);
  }

  /** The oldest event after `after_id` that matches (MCP wait_for_webhook_event's first look). */
  async firstAfter(query: { provider?: string; event_type?: string; after_id: number }): Promise<EventSummary | null> {
    const step = firstEventAfterStep(query);
    await this.ctx.caughtUp();
    const rows = await this.ctx.db.query<SummaryRow>(step.sql, step.params);
    return rows[0] ? toSummary(rows[0]) : null;
  }

  /** Whether any stored event or rejection names this provider (one index probe per table). */
  async providerSeen(provider: string): Promise<boolean> {
    await this.ctx.caughtUp();
    const rows = await this.ctx.run<{ seen: boolean }>(providerSeenStep(provider));
    return rows[0]?.seen === true;
  }

  async latestId(): Promise<number> {
    await this.ctx.caughtUp();
    const rows = await this.ctx.db.query<{ id: number | string | null }>('SELECT max(id) AS id FROM events');
    return Number(rows[0]?.id ?? 0);
  }

  /** From the primary key's ends: no count(*). */
  async estimatedCount(): Promise<number> {
    const rows = await this.ctx.db.query<{ n: number | string | null }>('SELECT max(id) - min(id) + 1 AS n FROM events');
    return Number(rows[0]?.n ?? 0);
  }

  /** Deletes every event (and, by cascade, its replays) and every rejection. */
  async clear(): Promise<void> {
    await this.ctx.caughtUp(); // everything acknowledged before the clear goes with it
    this.ctx.journal?.forgetStoredKeys();
    await this.ctx.db
      .transaction(async (tx) => {
        // Shapes go with the events they were made of (the event notes by cascade); generation tells the tracker.
        await tx.exec('DELETE FROM events; DELETE FROM event_search; DELETE FROM rejections; DELETE FROM shapes; UPDATE shape_state SET generation = generation + 1;');
      })
      .finally(() => this.ctx.journal?.forgetStoredKeys());
  }

  /** Waits for queued inserts; later ones are refused. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.flushScheduled || this.flushing || this.pending.length > 0) {
      if (this.flushing) await this.flushing;
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
