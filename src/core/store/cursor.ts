import { SwitchboardError } from '../errors.js';

/**
 * Opaque keyset cursor: the last row's exact stored timestamp (microseconds, as text, so no
 * float or Date rounding) and its id. Rows that share a timestamp are ordered by id.
 */
export interface Cursor {
  received_at: string;
  id: number;
}

const ISO_MICROS = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.\d{6}Z$/;

/**
 * A cursor is caller input (it comes back from outside): its time must be one PostgreSQL can
 * read, or a forged `2026-13-45T99:99:99` would reach SQL and fail there as our error.
 */
function isRealTime(text: string): boolean {
  const match = ISO_MICROS.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [number, number, number, number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  // Date.UTC maps years 0–99 to 1900–1999; setUTCFullYear puts them back before comparing.
  date.setUTCFullYear(year, month - 1, day);
  return (
    year >= 1 &&
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    hour < 24 &&
    minute < 60 &&
    second < 60
  );
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

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** A `since` / `until` filter: an ISO-8601 date or time that exists; passed to SQL as text. */
export function parseTimeFilter(name: string, text: string): string {
  const time = Date.parse(text);
  const valid = ISO_TIME.test(text) && !Number.isNaN(time) && validCalendarDate(text);
  if (!valid) {
    throw new SwitchboardError('invalid_argument', `${name} must be an ISO-8601 time such as 2026-11-30T09:12:55Z (got ${JSON.stringify(text.slice(0, 64))})`);
  }
  return text;
}

function validCalendarDate(text: string): boolean {
  const [year, month, day] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  // setUTCFullYear, not Date.UTC: that one reads years 0–99 as 1900–1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
