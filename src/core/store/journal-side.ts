import type { EventSummary } from '../../shared/events.js';
import type { JournalEvent } from '../new-event.js';
import { JOURNAL_COPY_TYPES, JOURNAL_INSERT_COLUMNS, journalCopyRow, toSummary, type SummaryRow } from './columns.js';
import { encodeCopyBinary } from './copy-binary.js';
import type { SqlClient } from './sql-client.js';
import { eventKeysAfterStep, eventsByKeysStep } from './sql-builders.js';

/**
 * The journal's database side (src/core/journal's JournalTarget): applying its records, where it
 * stands, and the lookups its redelivery check makes. The journal calls these; nothing else does.
 */
export class JournalSide {
  constructor(private readonly db: SqlClient) {}

  /**
   * Stores events with the ids and times they were acknowledged with by binary COPY
   * (copy-binary.ts says why), and records the journal position in the same transaction, so a
   * crash between the two cannot lose or repeat a row. A redelivery cannot reach here (the
   * journal dedupes); if one did, the unique index would fail the batch and the journal would
   * isolate that row and drop it, logged.
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

  /** From the primary key's ends: no count(*) (the redelivery filter's size). */
  async estimatedEventCount(): Promise<number> {
    const rows = await this.db.query<{ n: number | string | null }>('SELECT max(id) - min(id) + 1 AS n FROM events');
    return Number(rows[0]?.n ?? 0);
  }
}
