import { describe, expect, it } from 'vitest';
import { KeyFilter } from '../../../src/core/journal/key-filter.js';

// The redelivery filter (src/core/journal/key-filter.ts): "no" must always be right (a key it
// holds is never missed, or a redelivery would be stored twice); "maybe" may be wrong rarely.

const key = (i: number) => `github\u0000delivery-${i}`;

describe('the redelivery key filter', () => {
  it('never misses a key it holds, and is rarely wrong about one it does not', () => {
    const filter = new KeyFilter(20_000);
    for (let i = 0; i < 20_000; i++) filter.add(key(i));
    for (let i = 0; i < 20_000; i++) expect(filter.mayHave(key(i))).toBe(true);
    let wrong = 0;
    for (let i = 20_000; i < 120_000; i++) if (filter.mayHave(key(i))) wrong++;
    // Sized at 10 bits and 7 hashes a key: ~0.8 % false positives at capacity.
    expect(wrong / 100_000).toBeLessThan(0.02);
    expect(filter.saturated).toBe(false);
    filter.add(key(-1));
    expect(filter.saturated).toBe(true);
  });

  it('round-trips through its file with the id it was saved through', () => {
    const filter = new KeyFilter(1_000);
    for (let i = 0; i < 500; i++) filter.add(key(i));
    const restored = KeyFilter.deserialize(filter.serialize(4242));
    expect(restored?.throughId).toBe(4242);
    for (let i = 0; i < 500; i++) expect(restored!.filter.mayHave(key(i))).toBe(true);
    expect(restored!.filter.capacity).toBe(1_000);
  });

  it.each([
    ['empty', () => Buffer.alloc(0)],
    ['another file', () => Buffer.from('not a filter, just some bytes that are long enough to hold a header')],
    ['a flipped bit in the body', (file: Buffer) => (file.writeUInt8(file.readUInt8(100) ^ 1, 100), file)],
    ['a cut body', (file: Buffer) => file.subarray(0, file.byteLength - 8)],
    ['an absurd capacity', (file: Buffer) => (file.writeDoubleLE(2 ** 40, 8), file)],
  ])('refuses a damaged or foreign file (%s) rather than trust it', (_, damage) => {
    const filter = new KeyFilter(1_000);
    filter.add(key(1));
    expect(KeyFilter.deserialize(damage(filter.serialize(1)))).toBeNull();
  });
});
