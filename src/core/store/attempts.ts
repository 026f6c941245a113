import { ATTEMPT_LOG_KEPT } from '../../shared/delivery-lab.js';
import type { Attempt } from '../../shared/events.js';
import { iso } from './columns.js';
import type { StoreContext } from './context.js';

/**
 * Attempts per delivery identity (DESIGN §15): every delivery of the same (provider, external_id)
 * is an attempt of the first event. `events.attempts` holds the count (read with the row by every
 * list query); `event_attempts` the newest ATTEMPT_LOG_KEPT answers. Written after the answer,
 * so an attempt never delays one: the count the receiver decides on is kept in memory meanwhile.
 */

export interface NewAttempt extends Attempt {
  event_id: number;
}

export class Attempts {
  constructor(private readonly ctx: StoreContext) {}

  /** Records attempts (one statement for a batch); the event rows must be applied (caughtUp). */
  async record(attempts: readonly NewAttempt[]): Promise<void> {
    if (attempts.length === 0) return;
    await this.ctx.caughtUp();
    await this.ctx.db.query(
      `WITH incoming AS (
         SELECT * FROM unnest($1::bigint[], $2::int[], $3::timestamptz[], $4::int[], $5::int[], $6::int[])
           AS t(event_id, attempt, at, status, rule, delay_ms)
       ), logged AS (
         INSERT INTO event_attempts (event_id, attempt, at, status, rule, delay_ms)
         SELECT incoming.* FROM incoming JOIN events ON events.id = incoming.event_id
         ON CONFLICT (event_id, attempt) DO UPDATE SET at = excluded.at, status = excluded.status, rule = excluded.rule, delay_ms = excluded.delay_ms
       ), counted AS (
         UPDATE events SET attempts = greatest(events.attempts, top.attempt)
         FROM (SELECT event_id, max(attempt) AS attempt FROM incoming GROUP BY event_id) AS top
         WHERE events.id = top.event_id
       )
       DELETE FROM event_attempts USING (SELECT event_id, max(attempt) AS attempt FROM incoming GROUP BY event_id) AS top
       WHERE event_attempts.event_id = top.event_id AND event_attempts.attempt <= top.attempt - ${ATTEMPT_LOG_KEPT}`,
      [
        attempts.map((a) => a.event_id),
        attempts.map((a) => a.attempt),
        attempts.map((a) => a.at),
        attempts.map((a) => a.status),
        attempts.map((a) => a.rule),
        attempts.map((a) => a.delay_ms),
      ],
    );
  }

  /** How many attempts an event has had (0: no such event). */
  async count(eventId: number): Promise<number> {
    await this.ctx.caughtUp();
    const rows = await this.ctx.db.query<{ attempts: number | string }>('SELECT attempts FROM events WHERE id = $1', [eventId]);
    return rows[0] ? Number(rows[0].attempts) : 0;
  }

  /** The newest attempts of one event, oldest first. */
  async log(eventId: number): Promise<Attempt[]> {
    await this.ctx.caughtUp();
    const rows = await this.ctx.db.query<{ attempt: number; at: string; status: number; rule: number | null; delay_ms: number }>(
      `SELECT attempt, ${iso('at')} AS at, status, rule, delay_ms FROM event_attempts
       WHERE event_id = $1 ORDER BY attempt DESC LIMIT ${ATTEMPT_LOG_KEPT}`,
      [eventId],
    );
    return rows.reverse().map((row) => ({ attempt: Number(row.attempt), at: row.at, status: Number(row.status), rule: row.rule === null ? null : Number(row.rule), delay_ms: Number(row.delay_ms) }));
  }
}
