import type { NewEvent } from '../new-event.js';

/**
 * Makes text from the outside storable, whatever door it came through (HTTP, Redis, import).
 *
 * Defends against one odd value failing a delivery — or, worse, every delivery committed in the
 * same multi-row INSERT: Postgres text refuses NUL, jsonb refuses the `\u0000` and lone-surrogate
 * escapes `JSON.stringify` writes, and a btree index entry over ~2.7 KB is refused (event_type and
 * external_id are indexed). NUL and lone surrogates become U+FFFD; lengths are capped.
 */

/** Indexed columns: a btree entry must stay under ~2.7 KB, and a code point is ≤ 4 bytes. */
export const MAX_EVENT_TYPE_CHARS = 256;
export const MAX_EXTERNAL_ID_CHARS = 512;
export const MAX_CONTENT_TYPE_CHARS = 256;
export const MAX_DETAIL_CHARS = 2_000;
export const MAX_HEADER_NAME_CHARS = 256;
export const MAX_HEADER_VALUE_CHARS = 8_192;
/** A rejection keeps at most this much of its (sanitized) headers, as JSON (DESIGN §5). */
export const MAX_REJECTION_HEADERS_BYTES = 8 * 1024;

const ELLIPSIS = '…';
/** NUL, and a surrogate without its other half (ES2024's toWellFormed, which lib ES2023 lacks). */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** String.prototype.isWellFormed (V8 11, Node 20), which lib ES2023 does not declare either. */
const isWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;

// Almost every text is storable as it is: two linear checks instead of the regex's lookarounds.
const wellFormed = (text: string) =>
  isWellFormed && isWellFormed.call(text) && !text.includes('\u0000') ? text : text.replace(UNSTORABLE, '\uFFFD');

/** NUL and unpaired surrogates replaced, cut to `maxChars` (with `…` when cut). */
export function storableText(value: string, maxChars: number): string {
  let text = value;
  if (text.length > maxChars) text = `${text.slice(0, maxChars - 1)}${ELLIPSIS}`;
  // This also repairs a surrogate pair the cut above split in two.
  return wellFormed(text);
}

export function storableOrNull(value: string | null, maxChars: number): string | null {
  return value === null ? null : storableText(value, maxChars);
}

/**
 * Header names and values made storable; with `maxBytes`, headers are kept in order until their
 * JSON would exceed it (the rest dropped, `truncated` says so).
 */
export function storableHeaders(
  headers: Record<string, string>,
  maxBytes = Number.POSITIVE_INFINITY,
): { headers: Record<string, string>; truncated: boolean } {
  const out: Record<string, string> = {};
  let truncated = false;
  let size = 2; // {}
  for (const rawName in headers) {
    if (!Object.hasOwn(headers, rawName)) continue;
    const rawValue = headers[rawName]!;
    const name = storableText(rawName, MAX_HEADER_NAME_CHARS);
    let value = storableText(String(rawValue), MAX_HEADER_VALUE_CHARS);
    if (value.length < String(rawValue).length) truncated = true;
    if (maxBytes === Number.POSITIVE_INFINITY) {
      // No budget to keep (every event): no need to measure each header's JSON.
      out[name] = value;
      continue;
    }
    const cost = (text: string) => Buffer.byteLength(JSON.stringify(text)) + 2; // "name":"value",
    const room = maxBytes - size - cost(name);
    if (room < cost(value)) {
      truncated = true;
      // Keep the start of a long value when there is room for a useful part of it.
      if (room < 64) continue;
      value = fitBytes(value, room);
    }
    out[name] = value;
    size += cost(name) + cost(value);
  }
  return { headers: out, truncated };
}

/** The longest prefix (plus `…`) whose JSON form fits in `maxBytes` (minus a separator). */
function fitBytes(value: string, maxBytes: number): string {
  let low = 0;
  let high = value.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    const candidate = wellFormed(`${value.slice(0, mid)}${ELLIPSIS}`);
    if (Buffer.byteLength(JSON.stringify(candidate)) + 2 <= maxBytes) low = mid;
    else high = mid - 1;
  }
  return wellFormed(`${value.slice(0, low)}${ELLIPSIS}`);
}

/** An event's text fields made storable (the payload is kept byte for byte). */
export function storableEvent<T extends NewEvent>(event: T): T {
  return {
    ...event,
    event_type: storableOrNull(event.event_type, MAX_EVENT_TYPE_CHARS),
    external_id: storableOrNull(event.external_id, MAX_EXTERNAL_ID_CHARS),
    verify_detail: storableOrNull(event.verify_detail, MAX_DETAIL_CHARS),
    content_type: storableOrNull(event.content_type, MAX_CONTENT_TYPE_CHARS),
    headers: storableHeaders(event.headers).headers,
    source_ip: storableOrNull(event.source_ip, MAX_CONTENT_TYPE_CHARS),
  };
}
