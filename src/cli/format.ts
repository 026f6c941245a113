import type { styleText } from 'node:util';
import type { TrustMode } from '../shared/events.js';
import { terminalSafe } from './terminal-safe.js';

/** Human output of the CLI: local times, aligned tables, the UI's colour language for trust. */

export type Style = Parameters<typeof styleText>[0];

/** Signed green, token amber, open red, queue blue — the UI's badges (DESIGN §9), in text too. */
export const TRUST_STYLE: Record<TrustMode, Style> = { signed: 'green', token: 'yellow', open: 'red', queue: 'blue' };

const pad2 = (n: number) => String(n).padStart(2, '0');

/** `09:41:07` in local time. */
export function clockTime(iso: string): string {
  const date = new Date(iso);
  return `${pad2(date.getHours())}:${pad2(date.getMinutes())}:${pad2(date.getSeconds())}`;
}

/** Local time, with the date in front when it is not today: `09:41:07` or `2026-11-30 09:41:07`. */
export function localTime(iso: string, now = new Date()): string {
  const date = new Date(iso);
  const sameDay = date.getFullYear() === now.getFullYear() && date.getMonth() === now.getMonth() && date.getDate() === now.getDate();
  const day = `${date.getFullYear()}-${pad2(date.getMonth() + 1)}-${pad2(date.getDate())}`;
  return sameDay ? clockTime(iso) : `${day} ${clockTime(iso)}`;
}

/** Local date and time with the UTC offset, for `show`. */
export function fullLocalTime(iso: string): string {
  const date = new Date(iso);
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const zone = `${sign}${pad2(Math.floor(Math.abs(offset) / 60))}:${pad2(Math.abs(offset) % 60)}`;
  return `${date.getFullYear()}-${pad2(date.getMonth() + 1)}-${pad2(date.getDate())} ${clockTime(iso)} ${zone}`;
}

export function bytes(size: number): string {
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KB`;
  return `${(size / 1024 / 1024).toFixed(1)} MB`;
}

/** Columns padded to their widest cell (the last column is not padded); cells shown terminal-safe. */
export function table(header: string[], rows: string[][]): string {
  const all = [header, ...rows].map((row) => row.map(terminalSafe));
  const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? '').length)));
  return all.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ').trimEnd()).join('\n') + '\n';
}
