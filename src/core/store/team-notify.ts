import type { EventSummary } from '../../shared/events.js';
import { SUMMARY_COLUMNS, toSummary, type SummaryRow } from './columns.js';
import type { SqlClient } from './sql-client.js';

/**
 * Team mode (several instances sharing one PostgreSQL event log): each instance announces the
 * events it stored with NOTIFY, and shows the others' live by LISTEN. A NOTIFY payload is capped
 * at 8000 bytes, so it carries ids, not summaries. Nothing to do on PGlite, which only one process
 * can open.
 */

/** NOTIFY channel on which instances sharing a PostgreSQL event log announce new events. */
export const EVENTS_CHANNEL = 'switchboard_events';

export class TeamNotify {
  /** Tells this instance's own notifications apart from other instances'. */
  private readonly instanceId = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;

  constructor(private readonly db: SqlClient) {}

  /** Announces newly stored events to the other instances (best effort: a lost NOTIFY loses only liveness). */
  async announce(ids: readonly number[]): Promise<void> {
    if (this.db.kind !== 'postgres' || ids.length === 0) return;
    await this.db.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, `${this.instanceId}:${ids.join(',')}`]).catch(() => {});
  }

  /**
   * Calls `onEvent` for events another instance stored in the same PostgreSQL database.
   * Resolves to a stop function.
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
}
