import { describe, expect, it } from 'vitest';
import { searchPatterns, searchUsesIndex, SEARCH_INDEX_MAX_CANDIDATES } from '../../../src/core/store/search.js';

/**
 * When a search trusts the trigram index with the events it has not read (listEvents): the index
 * costs a read per candidate, so a search whose trigrams are in many events walks instead.
 */
describe('a search’s choice between the index and reading on', () => {
  const million = { total: 1_000_000, unindexed: 0 };

  it('goes to the index for a word none of the rows read so far holds (rare, absent)', () => {
    expect(searchUsesIndex({ ...million, scanned: 500, near: 0 })).toBe(true);
  });

  it('reads on when the rows read say the index would give too many candidates', () => {
    // 1 in 2 and 1 in 60 of a million: far more than the index can check in time.
    expect(searchUsesIndex({ ...million, scanned: 500, near: 250 })).toBe(false);
    expect(searchUsesIndex({ ...million, scanned: 3_500, near: 60 })).toBe(false);
  });

  it('does not trust a single match in a few hundred rows, but does once thousands were read', () => {
    expect(searchUsesIndex({ ...million, scanned: 500, near: 1 })).toBe(false);
    expect(searchUsesIndex({ ...million, scanned: 5_000, near: 1 })).toBe(true);
  });

  it('counts events the search indexer has not reached, which the index step reads one by one', () => {
    expect(searchUsesIndex({ scanned: 500, near: 0, total: 1_000_000, unindexed: SEARCH_INDEX_MAX_CANDIDATES })).toBe(false);
  });

  it('looks for a few trigrams spread over a long search, lowercased', () => {
    expect(searchPatterns('Order order order').trigrams).toEqual(['%ord%', '%rde%', '%der%']);
    const long = searchPatterns('x'.repeat(10) + 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(20)).trigrams;
    expect(long).toHaveLength(8);
    expect(new Set(long).size).toBe(8);
    expect(() => searchPatterns('a_b%c')).toThrow(/3 letters or digits/);
  });
});
