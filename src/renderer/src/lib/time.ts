/** `14:03:22.118` in local time, with the date when it is not today. */
export function formatTime(iso: string, now = new Date()): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return sameDay(date, now) ? clock(date) : `${day(date)} ${clock(date)}`;
}

/**
 * The Events list's narrow column: `14:03:22.118` today, `11-29 14:03:22` earlier this year,
 * `2025-11-29 14:03` before that. The row's tooltip has the exact stored time.
 */
export function formatListTime(iso: string, now = new Date()): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  if (sameDay(date, now)) return clock(date);
  const hms = `${pad(date.getHours())}:${pad(date.getMinutes())}`;
  if (date.getFullYear() === now.getFullYear()) return `${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${hms}:${pad(date.getSeconds())}`;
  return `${day(date)} ${hms}`;
}

/** Milliseconds until the next local midnight, when "today" changes. */
export function msUntilTomorrow(now = new Date()): number {
  const midnight = new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1);
  return midnight.getTime() - now.getTime();
}

const pad = (n: number) => String(n).padStart(2, '0');
const sameDay = (a: Date, b: Date) => a.toDateString() === b.toDateString();
const day = (date: Date) => `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
const clock = (date: Date) => `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${String(date.getMilliseconds()).padStart(3, '0')}`;

/** `just now`, `5 s ago`, `12 min ago`, `3 h ago`, then the date: how long since a delivery. */
export function formatAgo(iso: string, now = Date.now()): string {
  const then = new Date(iso).getTime();
  if (Number.isNaN(then)) return iso;
  const seconds = Math.max(0, Math.round((now - then) / 1000));
  if (seconds < 5) return 'just now';
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return formatListTime(iso, new Date(now));
}
