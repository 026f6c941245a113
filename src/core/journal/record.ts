import { crc32 } from 'node:zlib';
import type { JournalEvent } from '../new-event.js';
import { MAC_BYTES, type JournalKey } from './journal-key.js';

/**
 * One journal record: an event exactly as it will be inserted, with the id and receive time it
 * was acknowledged with.
 *
 *   magic u32 | body length u32 | CRC-32 of the body u32 | 0 u32 | MAC (16 bytes) | body
 *   body: meta length u32 | meta (JSON, UTF-8) | payload bytes
 *
 * Defends against a torn write: a crash in the middle of an append leaves a record whose length
 * runs past the end of the file, or whose checksum does not match. decodeRecords stops there, so
 * a half-written record is never applied.
 *
 * And against a forged one (issue #22.4): the MAC is an HMAC-SHA256 of the first 16 bytes and the
 * body under the data dir's journal key (journal-key.ts, 0600). A record written by anyone without
 * the key — another account, another data dir — does not check and is skipped and reported like
 * a damaged one. The CRC stays: it tells a flipped byte (damage) from a record that was never ours.
 * Records of 0.4 and before ("SBJ1", no MAC) are read only on the start that creates the key.
 */

const MAGIC = 0x53424a32; // "SBJ2"
const LEGACY_MAGIC = 0x53424a31; // "SBJ1": before records were signed
const RECORD_HEADER_BYTES = 16 + MAC_BYTES;
const LEGACY_HEADER_BYTES = 16;
export const NOT_OURS = "a record's signature does not match this data dir's journal key";

/** The record of `event`: its metadata as JSON, then the payload, signed with `key`. */
export function encodeRecord(event: JournalEvent, key: JournalKey): Buffer {
  const { payload } = event;
  // Named fields rather than a rest copy of the event: about half the cost per delivery (in
  // process), and only what decodeRecords reads is written.
  const metaJson = JSON.stringify({
    provider: event.provider,
    family: event.family,
    event_type: event.event_type,
    external_id: event.external_id,
    trust_mode: event.trust_mode,
    verified: event.verified,
    verify_detail: event.verify_detail,
    content_type: event.content_type,
    headers: event.headers,
    source_ip: event.source_ip,
    origin: event.origin,
    id: event.id,
    received_at: event.received_at,
  });
  const metaBytes = Buffer.byteLength(metaJson, 'utf8');
  const bodyLength = 4 + metaBytes + payload.byteLength;
  const record = Buffer.allocUnsafe(RECORD_HEADER_BYTES + bodyLength);
  const at = RECORD_HEADER_BYTES;
  record.writeUInt32LE(MAGIC, 0);
  record.writeUInt32LE(bodyLength, 4);
  record.writeUInt32LE(0, 12);
  record.writeUInt32LE(metaBytes, at);
  record.write(metaJson, at + 4, 'utf8');
  record.set(payload, at + 4 + metaBytes);
  const body = record.subarray(at);
  record.writeUInt32LE(crc32(body), 8);
  record.set(key.mac(record.subarray(0, 16), body), 16);
  return record;
}

/** A stretch of a segment that holds no intact record, with intact records after it. */
export interface DamagedStretch {
  /** Byte offsets in the segment, end exclusive. */
  start: number;
  end: number;
  reason: string;
  /** The ids of the intact records on either side (null at the start of the segment). */
  previousId: number | null;
  nextId: number;
}

export interface DecodedRecords {
  events: JournalEvent[];
  /** Bytes up to the end of the last intact record; anything after is a torn or foreign tail. */
  validBytes: number;
  /** Why the records ended before the end of the buffer (a torn tail), if they did. */
  tornReason: string | null;
  /**
   * Damage in the middle (a flipped byte, a bad sector): skipped, and decoding resumed at the
   * next intact record, so one damaged record costs only itself (issue #22).
   */
  damaged: DamagedStretch[];
  /** The highest id of an intact record (kept or not), or null if there is none. */
  lastId: number | null;
}

const bytesOf = (magic: number) => Buffer.from([magic & 0xff, (magic >>> 8) & 0xff, (magic >>> 16) & 0xff, magic >>> 24]);
const MAGIC_BYTES = bytesOf(MAGIC);
const LEGACY_MAGIC_BYTES = bytesOf(LEGACY_MAGIC);

type Decoded = { event: JournalEvent; end: number } | { reason: string };

interface Reading {
  key: JournalKey;
  /** Unsigned records of an older version are read (the start that creates the key). */
  legacy: boolean;
}

/** The record at `offset`, or why there is none. */
function decodeAt(buffer: Buffer, offset: number, reading: Reading): Decoded {
  if (buffer.byteLength - offset < LEGACY_HEADER_BYTES) return { reason: 'a record header is cut short' };
  const magic = buffer.readUInt32LE(offset);
  const legacy = magic === LEGACY_MAGIC && reading.legacy;
  if (magic !== MAGIC && !legacy) {
    return { reason: magic === LEGACY_MAGIC ? 'a record is unsigned (written before records were signed, or by another account)' : 'a record does not start with the journal mark' };
  }
  const headerBytes = legacy ? LEGACY_HEADER_BYTES : RECORD_HEADER_BYTES;
  if (buffer.byteLength - offset < headerBytes) return { reason: 'a record header is cut short' };
  const bodyLength = buffer.readUInt32LE(offset + 4);
  const end = offset + headerBytes + bodyLength;
  if (bodyLength < 4 || end > buffer.byteLength) return { reason: 'a record is cut short' };
  const body = buffer.subarray(offset + headerBytes, end);
  if (crc32(body) !== buffer.readUInt32LE(offset + 8)) return { reason: "a record's checksum does not match" };
  if (!legacy && !reading.key.mac(buffer.subarray(offset, offset + 16), body).equals(buffer.subarray(offset + 16, offset + RECORD_HEADER_BYTES))) {
    return { reason: NOT_OURS };
  }
  const metaLength = body.readUInt32LE(0);
  if (4 + metaLength > body.byteLength) return { reason: 'a record is malformed' };
  let meta: Omit<JournalEvent, 'payload'> & { size?: number };
  try {
    meta = JSON.parse(body.toString('utf8', 4, 4 + metaLength)) as Omit<JournalEvent, 'payload'>;
  } catch {
    return { reason: 'a record is malformed' };
  }
  if (!Number.isSafeInteger(meta.id) || typeof meta.received_at !== 'string') return { reason: 'a record is malformed' };
  // Records written before 0.3's COPY applier also carry the payload's `size`, which nothing reads.
  const { size: _size, ...fields } = meta;
  // A copy, so the segment's buffer can be released once decoded.
  return { event: { ...fields, payload: Buffer.from(body.subarray(4 + metaLength)) }, end };
}

/** The next intact record after `from` (its mark, then a whole record that checks), with its offset. */
function nextIntact(buffer: Buffer, from: number, reading: Reading): { at: number; id: number } | null {
  const marks = reading.legacy ? [MAGIC_BYTES, LEGACY_MAGIC_BYTES] : [MAGIC_BYTES];
  let best: { at: number; id: number } | null = null;
  for (const mark of marks) {
    for (let at = buffer.indexOf(mark, from); at >= 0 && (best === null || at < best.at); at = buffer.indexOf(mark, at + 1)) {
      const decoded = decodeAt(buffer, at, reading);
      if ('event' in decoded) {
        best = { at, id: decoded.event.id };
        break;
      }
    }
  }
  return best;
}

/**
 * Every intact record of a segment, in file order, keeping those with `id > afterId` (earlier
 * ones are in the database already: their payloads are not copied out).
 */
export function decodeRecords(buffer: Buffer, key: JournalKey, afterId = 0, { legacy = false }: { legacy?: boolean } = {}): DecodedRecords {
  const reading: Reading = { key, legacy };
  const events: JournalEvent[] = [];
  const damaged: DamagedStretch[] = [];
  let offset = 0;
  let validBytes = 0;
  let lastId: number | null = null;
  while (offset < buffer.byteLength) {
    const decoded = decodeAt(buffer, offset, reading);
    if ('event' in decoded) {
      if (decoded.event.id > afterId) events.push(decoded.event);
      lastId = Math.max(lastId ?? 0, decoded.event.id);
      offset = validBytes = decoded.end;
      continue;
    }
    const resume = nextIntact(buffer, offset + 1, reading);
    if (!resume) return { events, validBytes, tornReason: decoded.reason, damaged, lastId };
    damaged.push({ start: offset, end: resume.at, reason: decoded.reason, previousId: lastId, nextId: resume.id });
    offset = resume.at;
  }
  return { events, validBytes, tornReason: null, damaged, lastId };
}
