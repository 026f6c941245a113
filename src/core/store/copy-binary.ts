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
const ISO_UTC = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?Z$/;

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
  if (Number.isNaN(ms)) throw new RangeError(`not a time: ${JSON.stringify(time)}`);
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

/** A value as it will be written: bytes (or a string to write as UTF-8) and its length. */
function prepare(type: CopyType, value: unknown): { text?: string; bytes?: Uint8Array; number?: bigint | number; length: number } | null {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'int8':
      return { number: typeof value === 'bigint' ? value : Number(value), length: 8 };
    case 'int4':
      return { number: Number(value), length: 4 };
    case 'bool':
      return { number: value ? 1 : 0, length: 1 };
    case 'timestamptz':
      return { number: pgMicros(value as string | Date), length: 8 };
    case 'text': {
      const text = String(value);
      return { text, length: Buffer.byteLength(text, 'utf8') };
    }
    case 'jsonb': {
      // jsonb's binary form: a version byte (1), then the JSON text.
      const text = JSON.stringify(value);
      return { text, length: 1 + Buffer.byteLength(text, 'utf8') };
    }
    case 'bytea': {
      const bytes = value as Uint8Array;
      return { bytes, length: bytes.byteLength };
    }
  }
}

/** `rows[i][j]` is column j (of type `types[j]`) of row i; null and undefined are SQL NULL. */
export function encodeCopyBinary(types: readonly CopyType[], rows: readonly (readonly unknown[])[]): Buffer {
  const prepared = rows.map((row) => types.map((type, column) => prepare(type, row[column])));
  let size = HEADER_BYTES + 2;
  for (const fields of prepared) {
    size += 2 + 4 * types.length;
    for (const field of fields) size += field?.length ?? 0;
  }
  const buffer = Buffer.allocUnsafe(size);
  SIGNATURE.copy(buffer, 0);
  buffer.writeInt32BE(0, SIGNATURE.length);
  buffer.writeInt32BE(0, SIGNATURE.length + 4);
  let offset = HEADER_BYTES;
  for (const fields of prepared) {
    offset = buffer.writeInt16BE(types.length, offset);
    for (let column = 0; column < types.length; column++) {
      const field = fields[column];
      if (!field) {
        offset = buffer.writeInt32BE(-1, offset);
        continue;
      }
      offset = buffer.writeInt32BE(field.length, offset);
      const type = types[column]!;
      if (type === 'jsonb') {
        buffer[offset] = 1;
        buffer.write(field.text!, offset + 1, 'utf8');
      } else if (field.text !== undefined) {
        buffer.write(field.text, offset, 'utf8');
      } else if (field.bytes) {
        buffer.set(field.bytes, offset);
      } else if (type === 'int4') {
        buffer.writeInt32BE(field.number as number, offset);
      } else if (type === 'bool') {
        buffer[offset] = field.number as number;
      } else {
        writeInt64(buffer, field.number!, offset);
      }
      offset += field.length;
    }
  }
  buffer.writeInt16BE(-1, offset);
  return buffer;
}
