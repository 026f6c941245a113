import { isUtf8 } from 'node:buffer';
import type { EventDetail, Replay } from '../../shared/events.js';
import type { EventRecord, ReplayRecord } from '../store/event-store.js';

/** Stored rows → the wire shapes of src/shared (bytes become text or base64). */

export function encodeBytes(bytes: Uint8Array): { text: string; encoding: 'utf8' | 'base64' } {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // isUtf8 rejects invalid sequences that toString('utf8') would silently replace with U+FFFD.
  if (isUtf8(buffer)) {
    return { text: buffer.toString('utf8'), encoding: 'utf8' };
  }
  return { text: buffer.toString('base64'), encoding: 'base64' };
}

export function toEventDetail(record: EventRecord): EventDetail {
  const { payload, ...rest } = record;
  const body = encodeBytes(payload);
  return { ...rest, payload: body.text, payload_encoding: body.encoding };
}

export function toWireReplay(record: ReplayRecord): Replay {
  const body = record.response_body === null ? null : encodeBytes(record.response_body);
  return {
    ...record,
    response_body: body?.text ?? null,
    response_body_encoding: body?.encoding ?? null,
  };
}
