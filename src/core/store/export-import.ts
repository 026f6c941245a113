import { SwitchboardError } from '../errors.js';
import { EVENT_INSERT_COLUMNS, EXPORT_COLUMNS, iso, searchDoc, toExported, type ExportRow } from './columns.js';
import type { StoreContext } from './context.js';
import { ISO_UTC } from './copy-binary.js';
import type { Cursor } from './cursor.js';
import { boundedWindow, searchMatch } from './search.js';
import { addEventFilters, Conditions } from './sql-builders.js';
import { storableEvent } from './storable.js';
import type { EventRecord, ExportFilter, ImportedEvent, JournalPort } from './types.js';

/**
 * Export and import (DESIGN §12): the store's side — batches of matching events, oldest first,
 * for the export stream; imported lines stored as events, deduplicated.
 */

/** Events an export batch with a search reads at most (~10 µs each at a million events). */
export const EXPORT_SEARCH_SCAN_ROWS = 5_000;

export class ExportImport {
  constructor(private readonly ctx: StoreContext) {}

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
  async batch(
    filter: ExportFilter,
    after: Cursor | null,
    limits: { rows: number; bytes: number; scanRows?: number },
  ): Promise<{ events: EventRecord[]; next: Cursor | null }> {
    await this.ctx.caughtUp();
    // The list's filters, with the same meaning (search included), in the opposite order.
    const c = new Conditions();
    addEventFilters(c, filter);
    if (after) c.where.push(`(events.received_at, events.id) > (${c.param(after.received_at)}::timestamptz, ${c.param(after.id)})`);
    if (filter.search !== undefined && filter.search !== '') return this.searchBatch(c, filter.search, limits);
    const keys = await this.ctx.db.query<{ id: number | string; received_at: string; payload_size: number | string }>(
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
    const rows = await this.ctx.db.query<ExportRow>(`SELECT ${EXPORT_COLUMNS} FROM events ${c.sql()} ORDER BY events.received_at, events.id`, c.params);
    const events = rows.map(toExported);
    return { events, next: { received_at: last.received_at, id: Number(last.id) } };
  }

  /** exportBatch with a search: a bounded window of the events after the cursor, then the payloads of its matches. */
  private async searchBatch(
    c: Conditions,
    search: string,
    limits: { rows: number; bytes: number; scanRows?: number },
  ): Promise<{ events: EventRecord[]; next: Cursor | null }> {
    const scanRows = limits.scanRows ?? EXPORT_SEARCH_SCAN_ROWS;
    // Bounded by rows and by text, as a list search's windows are (SEARCH_WINDOW_BYTES).
    const bounded = boundedWindow(c, c.sql(), 'ORDER BY events.received_at, events.id', scanRows);
    const match = searchMatch(c, search);
    const window = await this.ctx.db.query<{ id: number | string; received_at: string; payload_size: number | string; hit: boolean; lim_count: number | string }>(
      `WITH ${bounded}
       SELECT events.id, ${iso('events.received_at')} AS received_at, events.payload_size, ${match} AS hit, (SELECT count(*) FROM lim) AS lim_count
       FROM win JOIN events ON events.id = win.id
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
    const ended = Number(window[0]?.lim_count ?? 0) < scanRows && window.length === Number(window[0]?.lim_count ?? 0);
    if (ended && next !== null && next.id === Number(window.at(-1)?.id)) next = null;
    if (chosen.length === 0) return { events: [], next };
    const rows = await this.ctx.db.query<ExportRow>(
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
  async import(events: readonly ImportedEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    if (this.ctx.journal) return this.importThroughJournal(this.ctx.journal, events);
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
    const rows = await this.ctx.db.query<{ id: number | string }>(
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
  private async importThroughJournal(journal: JournalPort, events: readonly ImportedEvent[]): Promise<number> {
    await this.ctx.caughtUp();
    const keyless = events.flatMap((event, ordinal) => (event.external_id === null ? [{ event, ordinal }] : []));
    const present = new Set<number>();
    if (keyless.length > 0) {
      const rows = await this.ctx.db.query<{ ordinal: number }>(
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
}

/** An ISO time as the database prints it (microseconds), so a summary matches what a read returns. */
function normalizedTime(text: string): string {
  const match = ISO_UTC.exec(text);
  if (match) return `${match[1]}.${(match[2] ?? '').padEnd(6, '0')}Z`;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new SwitchboardError('invalid_argument', `received_at is not a time: ${JSON.stringify(text)}`);
  return new Date(ms).toISOString().replace('Z', '000Z');
}
