/**
 * Rows in PostgreSQL's binary COPY format (the "Binary Format" section of the COPY reference):
 * what the journal's applier feeds `COPY events … FROM '/dev/blob' WITH (FORMAT binary)`.
 *
 * Why binary COPY: on the embedded database it stores a batch of events for ~40 % less CPU than
 * `INSERT … SELECT FROM jsonb_to_recordset(…)` (docs/benchmarks.md) — no JSON array to parse per
 * row, no per-row projection, and the heap is filled by COPY's multi-row insert (one WAL record
 * per page instead of per row). Every value goes in its binary form, so nothing is escaped, and
 * Postgres still checks what it receives: text must be valid UTF-8 without NUL bytes, jsonb must
 * parse, timestamps must be in range — a bad row fails the COPY with a data error (SQLSTATE 22…)
 * like the INSERT did.
 *
 *   header:  "PGCOPY\n\377\r\n\0" | flags i32 = 0 | header extension length i32 = 0
 *   tuple:   field count i16 | per field: length i32 (-1 = NULL) | bytes
 *   trailer: i16 -1
 */

export type CopyType = 'int8' | 'int4' | 'bool' | 'text' | 'jsonb' | 'bytea' | 'timestamptz';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const HEADER_BYTES = SIGNATURE.length + 8;
/** Microseconds from the Unix epoch to PostgreSQL's (2000-01-01T00:00:00Z). */
const PG_EPOCH_US = Date.UTC(2000, 0, 1) * 1000;
const TWO_32 = 2 ** 32;
/** ISO-8601 UTC to the second, then up to six fractional digits: the stored form of a time. */
export const ISO_UTC = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?Z$/;

/**
 * A time as microseconds since PostgreSQL's epoch. The stored form is ISO-8601 UTC with up to six
 * fractional digits (the journal's), read exactly; anything else Date.parse reads, to the ms.
 */
export function pgMicros(time: string | Date): bigint | number {
  let ms: number;
  let extraUs = 0;
  const match = typeof time === 'string' ? ISO_UTC.exec(time) : null;
  if (match) {
    const fraction = (match[2] ?? '').padEnd(6, '0');
    ms = Date.parse(`${match[1]}.${fraction.slice(0, 3)}Z`);
    extraUs = Number(fraction.slice(3));
  } else {
    ms = typeof time === 'string' ? Date.parse(time) : time.getTime();
  }
  // Postgres's SQLSTATE for it: the journal then isolates the row instead of retrying the batch.
  if (Number.isNaN(ms)) throw Object.assign(new RangeError(`not a time: ${JSON.stringify(time)}`), { code: '22007' });
  const us = ms * 1000 + extraUs - PG_EPOCH_US;
  // Past ±285 years from 2000 a double no longer holds every microsecond.
  return Number.isSafeInteger(us) ? us : (BigInt(ms) * 1000n + BigInt(extraUs) - BigInt(PG_EPOCH_US));
}

function writeInt64(buffer: Buffer, value: bigint | number, offset: number): void {
  if (typeof value === 'bigint') {
    buffer.writeBigInt64BE(value, offset);
    return;
  }
  const high = Math.floor(value / TWO_32);
  buffer.writeInt32BE(high, offset);
  buffer.writeUInt32BE(value - high * TWO_32, offset + 4);
}

/** `value`'s bytes as a field of `type` (jsonb: its JSON text, made once and kept in `texts`). */
function fieldBytes(type: CopyType, value: unknown, texts: string[]): number {
  if (value === null || value === undefined) return 0;
  switch (type) {
    case 'int8':
    case 'timestamptz':
      return 8;
    case 'int4':
      return 4;
    case 'bool':
      return 1;
    case 'text':
      return Buffer.byteLength(String(value), 'utf8');
    case 'jsonb': {
      const text = JSON.stringify(value);
      texts.push(text);
      return 1 + Buffer.byteLength(text, 'utf8');
    }
    case 'bytea':
      return (value as Uint8Array).byteLength;
  }
}

/**
 * `rows[i][j]` is column j (of type `types[j]`) of row i; null and undefined are SQL NULL. The
 * buffer is exactly the data's size and its own (so it can be transferred to another thread).
 */
export function encodeCopyBinary(types: readonly CopyType[], rows: readonly (readonly unknown[])[]): Buffer {
  const texts: string[] = [];
  let size = HEADER_BYTES + 2;
  for (const row of rows) {
    size += 2 + 4 * types.length;
    for (let column = 0; column < types.length; column++) size += fieldBytes(types[column]!, row[column], texts);
  }
  // Every byte is written below; not from the shared pool, so the buffer can move between threads.
  const buffer = Buffer.allocUnsafeSlow(size);
  SIGNATURE.copy(buffer, 0);
  buffer.writeInt32BE(0, SIGNATURE.length); // flags
  buffer.writeInt32BE(0, SIGNATURE.length + 4); // header extension length
  let offset = HEADER_BYTES;
  let nextText = 0;
  for (const row of rows) {
    offset = buffer.writeInt16BE(types.length, offset);
    for (let column = 0; column < types.length; column++) {
      const value = row[column];
      if (value === null || value === undefined) {
        offset = buffer.writeInt32BE(-1, offset);
        continue;
      }
      const start = offset + 4;
      let end: number;
      switch (types[column]!) {
        case 'int8':
          writeInt64(buffer, typeof value === 'bigint' ? value : Number(value), start);
          end = start + 8;
          break;
        case 'timestamptz':
          writeInt64(buffer, pgMicros(value as string | Date), start);
          end = start + 8;
          break;
        case 'int4':
          end = buffer.writeInt32BE(Number(value), start);
          break;
        case 'bool':
          end = buffer.writeUInt8(value ? 1 : 0, start);
          break;
        case 'text':
          end = start + buffer.write(String(value), start, 'utf8');
          break;
        case 'jsonb':
          // jsonb's binary form: a version byte (1), then the JSON text.
          buffer[start] = 1;
          end = start + 1 + buffer.write(texts[nextText++]!, start + 1, 'utf8');
          break;
        case 'bytea':
          buffer.set(value as Uint8Array, start);
          end = start + (value as Uint8Array).byteLength;
          break;
      }
      buffer.writeInt32BE(end - start, offset);
      offset = end;
    }
  }
  buffer.writeInt16BE(-1, offset);
  return buffer;
}
