import { z } from 'zod';
import { timeProblem } from './time.js';

/**
 * Text fields a caller sends (UI API, IPC, MCP tools): checked at the boundary so that what
 * reaches SQL, config.json, a header or a log line is something they can hold. PostgreSQL
 * refuses NUL in text (a filter with one used to end as a 500), an unpaired UTF-16 surrogate
 * has no UTF-8 form (it would be silently replaced on the way), and lengths are bounded so a
 * filter is never a megabyte. Payload fields are bytes, not text, and do not use these.
 */

const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const MAX_NAME_CHARS = 200;
export const MAX_TEXT_CHARS = 1000;
export const MAX_URL_CHARS = 2048;
/** A search is at most this long (DESIGN §5). */
export const MAX_SEARCH_CHARS = 1_000;

export const isStorableText = (text: string): boolean => !UNSTORABLE.test(text);

const storable = { error: 'must not contain NUL characters or unpaired UTF-16 surrogates' } as const;

/** A non-empty name, filter value or setting: at most `max` characters, no NUL, no lone surrogate. */
export function inputText(max: number = MAX_TEXT_CHARS, min = 1) {
  return z.string().min(min).max(max).refine(isStorableText, storable);
}

/** An opaque pagination cursor as the server issued it (base64url of a short JSON pair). */
export const CursorInputSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9_-]+$/, { error: 'is not a cursor this server issued (pass next_cursor back unchanged)' });

/**
 * ISO-8601 times and dates as every boundary takes them (src/shared/time.ts): zod checks the
 * shape, then the one time rule — a calendar date, at most six fractional digits, years 1–9999
 * in UTC (`9999-12-31T23:00:00-05:00` is year 10000 and refused; so is year 0).
 */
export const IsoDateTimeSchema = z.iso.datetime({ offset: true }).superRefine((text, ctx) => {
  const problem = timeProblem(text);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
export const IsoDateSchema = z.iso.date().superRefine((text, ctx) => {
  const problem = timeProblem(text, { dateOnly: true });
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
