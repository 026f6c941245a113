/**
 * One rule for times at every boundary (DESIGN §12, issue #22.9): an imported `received_at`, a
 * cursor, the `since` / `until` filters of the API, MCP, CLI and export. A time is ISO-8601 — a
 * date (`2026-11-30`) or a date and time with `Z` or an offset (`2026-11-30T09:12:55.123456+02:00`),
 * seconds optional, at most six fractional digits (what the database keeps) — that exists on the
 * calendar and falls in the years 1–9999 **in UTC**. So `9999-12-31T23:00:00-05:00` (year 10000
 * in UTC) and `0000-01-01` (1 BC) are refused: outside that range the database prints years that
 * ISO-8601 readers, cursors and HAR validators do not take back.
 *
 * No regular expression here runs over unbounded input with nested repetition: the patterns are
 * anchored, fixed-width except for the fraction, which is bounded.
 */

export const MIN_YEAR = 1;
export const MAX_YEAR = 9999;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,12}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)$/;

export type ParsedTime = { utc: string; ms: number } | { problem: string };

const RULE = 'an ISO-8601 time such as 2026-11-30T09:12:55Z, in the years 0001–9999 (UTC)';

/**
 * `text` as the exact UTC time the database stores (`YYYY-MM-DDTHH:MM:SS.ffffffZ`), or why it is
 * not one. `dateOnly` allows a bare date (midnight UTC), as the filters do.
 */
export function parseTime(text: string, { dateOnly = false }: { dateOnly?: boolean } = {}): ParsedTime {
  if (text.length > 64) return { problem: `must be ${RULE}` };
  const date = DATE.exec(text);
  const match = date ?? DATE_TIME.exec(text);
  if (!match || (date && !dateOnly)) return { problem: `must be ${RULE}` };
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const [hour, minute, second] = date ? [0, 0, 0] : [Number(match[4]), Number(match[5]), Number(match[6] ?? 0)];
  const fraction = date ? '' : (match[7] ?? '');
  if (fraction.length > 6) return { problem: `has ${fraction.length} fractional digits; at most 6 (microseconds) are kept — ${RULE}` };
  const offsetMinutes = date || match[8] ? 0 : (match[9] === '-' ? -1 : 1) * (Number(match[10]) * 60 + Number(match[11] ?? 0));
  if (!date && !match[8] && (Number(match[10]) > 23 || Number(match[11] ?? 0) > 59)) return { problem: `has an offset that does not exist — ${RULE}` };
  if (hour > 23 || minute > 59 || second > 59) return { problem: `is not a time of day that exists — ${RULE}` };
  // setUTCFullYear, not Date.UTC: that one reads years 0–99 as 1900–1999.
  const local = new Date(0);
  local.setUTCFullYear(year, month - 1, day);
  if (local.getUTCFullYear() !== year || local.getUTCMonth() !== month - 1 || local.getUTCDate() !== day) {
    return { problem: `is not a date that exists — ${RULE}` };
  }
  local.setUTCHours(hour, minute, second, 0);
  const ms = local.getTime() - offsetMinutes * 60_000;
  const utc = new Date(ms);
  const utcYear = utc.getUTCFullYear();
  if (utcYear < MIN_YEAR || utcYear > MAX_YEAR) return { problem: `is in the year ${utcYear} in UTC — ${RULE}` };
  return { utc: `${utc.toISOString().slice(0, 19)}.${fraction.padEnd(6, '0')}Z`, ms: ms + Number(`0.${fraction || '0'}`) * 1000 };
}

/** The problem with `text` as a time, or null when it follows the rule (zod refinements). */
export function timeProblem(text: string, options?: { dateOnly?: boolean }): string | null {
  const parsed = parseTime(text, options);
  return 'problem' in parsed ? parsed.problem : null;
}
