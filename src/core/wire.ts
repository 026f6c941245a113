import { isUtf8 } from 'node:buffer';
import type { Attempt, EventDetail, Replay } from '../shared/events.js';
import type { DriftMark, SpecViolation } from '../shared/shapes.js';
import type { EventRecord, ReplayRecord } from './store/types.js';

/** Stored rows → the wire shapes of src/shared (bytes become text or base64). */

export function encodeBytes(bytes: Uint8Array): { text: string; encoding: 'utf8' | 'base64' } {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // isUtf8 rejects invalid sequences that toString('utf8') would silently replace with U+FFFD.
  if (isUtf8(buffer)) {
    return { text: buffer.toString('utf8'), encoding: 'utf8' };
  }
  return { text: buffer.toString('base64'), encoding: 'base64' };
}

export interface CutBytes {
  text: string;
  encoding: 'utf8' | 'base64';
  truncated: boolean;
}

/**
 * At most `maxBytes` of `bytes` for a bounded answer (MCP). Text stays text: the cut moves back
 * to a character boundary, so a multibyte character is never split into U+FFFD. Bytes that are
 * not UTF-8 are the base64 of exactly the first `maxBytes`.
 *
 * `complete: false` says `bytes` may itself be a prefix cut anywhere (a stored response body is
 * capped at 64 KiB): an incomplete character at its end then does not make it binary.
 */
export function cutBytes(bytes: Uint8Array, maxBytes: number, options: { complete: boolean } = { complete: true }): CutBytes {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const limit = Math.min(maxBytes, buffer.length);
  let end = limit;
  if (limit < buffer.length) {
    // Back off over continuation bytes (10xxxxxx) to the start of the character cut in two.
    while (end > 0 && end > limit - 3 && (buffer[end]! & 0xc0) === 0x80) end--;
  } else if (!options.complete) {
    end = withoutIncompleteTail(buffer);
  }
  const isText = options.complete ? isUtf8(buffer) : isUtf8(buffer.subarray(0, end));
  if (isText) return { text: buffer.subarray(0, end).toString('utf8'), encoding: 'utf8', truncated: end < buffer.length };
  return { text: buffer.subarray(0, limit).toString('base64'), encoding: 'base64', truncated: limit < buffer.length };
}

/** Length of `buffer` without a character left incomplete at its very end. */
function withoutIncompleteTail(buffer: Buffer): number {
  for (let back = 1; back <= Math.min(4, buffer.length); back++) {
    const byte = buffer[buffer.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: the lead is further back
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? buffer.length - back : buffer.length;
  }
  return buffer.length;
}

/** What the shape tracker noted about an event (DESIGN §16), as the store answers it. */
export interface ShapeNotes {
  drift: unknown[] | null;
  spec_violations: unknown[] | null;
}

export function toEventDetail(record: EventRecord, attemptLog: Attempt[] = [], notes: ShapeNotes = { drift: null, spec_violations: null }): EventDetail {
  const { payload, ...rest } = record;
  const body = encodeBytes(payload);
  return {
    ...rest,
    payload: body.text,
    payload_encoding: body.encoding,
    attempt_log: attemptLog,
    drift: (notes.drift ?? []) as DriftMark[],
    ...(notes.spec_violations ? { spec_violations: notes.spec_violations as SpecViolation[] } : {}),
  };
}

export function toWireReplay(record: ReplayRecord): Replay {
  const body = record.response_body === null ? null : encodeBytes(record.response_body);
  return {
    ...record,
    response_body: body?.text ?? null,
    response_body_encoding: body?.encoding ?? null,
  };
}
