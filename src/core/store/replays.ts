import { MAX_RESPONSE_BODY_BYTES } from '../../shared/events.js';
import { iso, REPLAY_COLUMNS, toReplay, type ReplayRow } from './columns.js';
import type { StoreContext } from './context.js';
import { replayListStep } from './sql-builders.js';
import { MAX_DETAIL_CHARS, storableHeaders, storableOrNull } from './storable.js';
import type { LastReplayRecord, NewReplay, ReplayRecord } from './types.js';

/** Every replay and forward attempt (DESIGN §7): what was sent, and the first 64 KiB of what came back. */

export class Replays {
  constructor(private readonly ctx: StoreContext) {}

  async insert(replay: NewReplay): Promise<ReplayRecord> {
    await this.ctx.caughtUp(); // the event it references must be in the table
    const body = replay.response_body ? replay.response_body.subarray(0, MAX_RESPONSE_BODY_BYTES) : null;
    const rows = await this.ctx.db.query<ReplayRow>(
      `INSERT INTO replays (event_id, target_url, resigned, delivered, response_status, response_ms, response_headers,
                            response_body, error, requested_by, payload_edited, headers_overridden, request_headers, warning, chaos)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::bytea, $9, $10, $11, $12::jsonb, $13::jsonb, $14, $15)
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
        replay.chaos ?? null,
      ],
    );
    return toReplay(rows[0]!);
  }

  /** Replay history of one event, newest first. */
  async list(eventId: number, limit = 100): Promise<ReplayRecord[]> {
    const step = replayListStep(eventId, limit);
    await this.ctx.caughtUp();
    const rows = await this.ctx.db.query<ReplayRow>(step.sql, step.params);
    return rows.map(toReplay);
  }

  /**
   * The last replay of each of these events (events never replayed are absent): one probe of
   * replays_event_idx per event, so a page of the list costs as many index lookups as rows.
   */
  async last(eventIds: readonly number[]): Promise<Map<number, LastReplayRecord>> {
    if (eventIds.length === 0) return new Map();
    await this.ctx.caughtUp();
    const rows = await this.ctx.db.query<LastReplayRecord & { event_id: number | string }>(
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
}
