import { parseTime } from '../../shared/time.js';
import { SwitchboardError } from '../errors.js';

/**
 * Opaque keyset cursor: the last row's exact stored timestamp (microseconds, as text, so no
 * float or Date rounding) and its id. Rows that share a timestamp are ordered by id.
 */
export interface Cursor {
  received_at: string;
  id: number;
}

const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/**
 * A cursor is caller input (it comes back from outside): its time must be the exact stored form
 * and follow the one time rule (src/shared/time.ts), or a forged `2026-13-45T99:99:99` would
 * reach SQL and fail there as our error.
 */
function isRealTime(text: string): boolean {
  return ISO_MICROS.test(text) && !('problem' in parseTime(text));
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.received_at, cursor.id])).toString('base64url');
}

export function decodeCursor(text: string): Cursor {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      isRealTime(value[0]) &&
      Number.isSafeInteger(value[1]) &&
      value[1] > 0
    ) {
      return { received_at: value[0], id: value[1] };
    }
  } catch {
    // fall through: any undecodable cursor is the caller's mistake
  }
  throw new SwitchboardError('invalid_argument', 'cursor is not one this server issued (pass next_cursor back unchanged)');
}

/**
 * A `since` / `until` filter: an ISO-8601 date or time under the one time rule
 * (src/shared/time.ts); passed to SQL as the exact UTC time it names.
 */
export function parseTimeFilter(name: string, text: string): string {
  const parsed = parseTime(text, { dateOnly: true });
  if ('problem' in parsed) throw new SwitchboardError('invalid_argument', `${name} ${parsed.problem} (got ${JSON.stringify(text.slice(0, 64))})`);
  return parsed.utc;
}
