import { crc32 } from 'node:zlib';

/**
 * A Bloom filter of the (provider, external_id) keys in the database, so that a new delivery —
 * almost every delivery — is known to be new without asking the database. "Maybe present"
 * (a redelivery, or a false positive ~1 % of the time) is settled by an index lookup.
 * Deleted events stay in the filter: they only cost that lookup.
 */

const BITS_PER_KEY = 10;
const HASHES = 7;
const FILE_MAGIC = 0x53424b46; // "SBKF"
const FILE_HEADER_BYTES = 32;

export class KeyFilter {
  private readonly bits: Uint32Array;
  private readonly size: number;
  private added = 0;

  constructor(readonly capacity: number) {
    this.size = Math.max(1024, Math.ceil(capacity * BITS_PER_KEY));
    this.bits = new Uint32Array(Math.ceil(this.size / 32));
  }

  /**
   * The filter as a file, with the highest event id whose key it holds: a clean stop saves it
   * so the next start reads a few MB instead of every stored key (docs/benchmarks.md).
   */
  serialize(throughId: number): Buffer {
    const body = Buffer.from(this.bits.buffer, this.bits.byteOffset, this.bits.byteLength);
    const header = Buffer.alloc(FILE_HEADER_BYTES);
    header.writeUInt32LE(FILE_MAGIC, 0);
    header.writeUInt32LE(crc32(body), 4);
    header.writeDoubleLE(this.capacity, 8);
    header.writeDoubleLE(this.added, 16);
    header.writeDoubleLE(throughId, 24);
    return Buffer.concat([header, body]);
  }

  /** The filter and its id from `serialize`, or null for anything else (then: load from the database). */
  static deserialize(file: Buffer): { filter: KeyFilter; throughId: number } | null {
    if (file.byteLength < FILE_HEADER_BYTES || file.readUInt32LE(0) !== FILE_MAGIC) return null;
    const capacity = file.readDoubleLE(8);
    if (!Number.isSafeInteger(capacity) || capacity <= 0 || capacity > 2 ** 32) return null;
    const filter = new KeyFilter(capacity);
    const body = file.subarray(FILE_HEADER_BYTES);
    if (body.byteLength !== filter.bits.byteLength || crc32(body) !== file.readUInt32LE(4)) return null;
    new Uint8Array(filter.bits.buffer).set(body);
    filter.added = file.readDoubleLE(16);
    return { filter, throughId: file.readDoubleLE(24) };
  }

  /** True when more keys were added than it was sized for (false positives grow past ~1 %). */
  get saturated(): boolean {
    return this.added > this.capacity;
  }

  add(key: string): void {
    const [h1, h2] = hashes(key);
    for (let i = 0; i < HASHES; i++) {
      const bit = (h1 + i * h2) % this.size;
      this.bits[bit >>> 5]! |= 1 << (bit & 31);
    }
    this.added++;
  }

  mayHave(key: string): boolean {
    const [h1, h2] = hashes(key);
    for (let i = 0; i < HASHES; i++) {
      const bit = (h1 + i * h2) % this.size;
      if ((this.bits[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}

/** Two independent 32-bit FNV-1a hashes (different offset bases), the second odd. */
function hashes(key: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  return [a >>> 0, (b | 1) >>> 0];
}
