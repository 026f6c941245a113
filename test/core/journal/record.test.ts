import { describe, expect, it } from 'vitest';
import { JournalKey } from '../../../src/core/journal/journal-key.js';
import { decodeRecords, encodeRecord } from '../../../src/core/journal/record.js';
import { journalEvent } from '../../helpers/journal.js';

// The journal's record (src/core/journal/record.ts): what a crash or a damaged disk leaves must
// cost only the records it touched.

const key = JournalKey.ephemeral();
const segment = (ids: number[]) => ids.map((id) => encodeRecord(journalEvent(id), key));

describe('journal records', () => {
  it('round-trips an event exactly, payload bytes included', () => {
    const event = journalEvent(7, { payload: Buffer.from([0, 0xff, 0x53, 0x42, 0x4a, 0x31]), headers: { 'x-odd': 'ü\u0000' } });
    const decoded = decodeRecords(encodeRecord(event, key), key);
    expect(decoded).toMatchObject({ tornReason: null, damaged: [], lastId: 7 });
    expect(decoded.events).toEqual([{ ...event, payload: Buffer.from(event.payload) }]);
  });

  it('cuts a torn tail off at the last whole record', () => {
    const records = segment([1, 2, 3]);
    const whole = records[0]!.byteLength + records[1]!.byteLength;
    const decoded = decodeRecords(Buffer.concat([records[0]!, records[1]!, records[2]!.subarray(0, 40)]), key);
    expect(decoded.events.map((event) => event.id)).toEqual([1, 2]);
    expect(decoded).toMatchObject({ validBytes: whole, tornReason: 'a record is cut short', damaged: [], lastId: 2 });
  });

  it.each([
    ['in the payload', (record: Buffer) => record.byteLength - 3, "a record's checksum does not match"],
    ['in the mark', () => 1, 'a record does not start with the journal mark'],
    ['in the length', () => 6, 'a record is cut short'],
  ])('skips a record with a flipped byte %s and reads on from the next intact one', (_, where, reason) => {
    const records = segment([1, 2, 3, 4, 5]);
    const damaged = Buffer.from(records[2]!);
    damaged.writeUInt8(damaged.readUInt8(where(damaged)) ^ 0x40, where(damaged));
    const start = records[0]!.byteLength + records[1]!.byteLength;
    const decoded = decodeRecords(Buffer.concat([records[0]!, records[1]!, damaged, records[3]!, records[4]!]), key);
    expect(decoded.events.map((event) => event.id)).toEqual([1, 2, 4, 5]);
    expect(decoded.tornReason).toBeNull();
    expect(decoded.damaged).toEqual([{ start, end: start + damaged.byteLength, reason, previousId: 2, nextId: 4 }]);
  });

  it('does not take a record hidden in a damaged record\'s payload for a record of its own unless it checks out', () => {
    // A payload that holds the journal mark and a length, but no valid checksum.
    const bait = Buffer.concat([Buffer.from('SBJ2', 'latin1').reverse(), Buffer.alloc(12, 0), Buffer.from('not a record')]);
    const records = [encodeRecord(journalEvent(1), key), encodeRecord(journalEvent(2, { payload: bait }), key), encodeRecord(journalEvent(3), key)];
    const damaged = Buffer.from(records[1]!);
    damaged.writeUInt8(damaged.readUInt8(40) ^ 0x01, 40);
    const decoded = decodeRecords(Buffer.concat([records[0]!, damaged, records[2]!]), key);
    expect(decoded.events.map((event) => event.id)).toEqual([1, 3]);
    expect(decoded.damaged).toHaveLength(1);
  });

  it('keeps only records past the applied position, but knows the last id of all', () => {
    const decoded = decodeRecords(Buffer.concat(segment([1, 2, 3, 4])), key, 3);
    expect(decoded.events.map((event) => event.id)).toEqual([4]);
    expect(decoded.lastId).toBe(4);
    expect(decodeRecords(Buffer.concat(segment([1, 2])), key, 2)).toMatchObject({ events: [], lastId: 2 });
  });

  it('skips a record signed with another key (another account, another data dir) like a damaged one, and reads on (issue #22.4)', () => {
    const forged = encodeRecord(journalEvent(3, { trust_mode: 'signed', verified: true }), JournalKey.ephemeral());
    const records = segment([1, 2, 4]);
    const start = records[0]!.byteLength + records[1]!.byteLength;
    const decoded = decodeRecords(Buffer.concat([records[0]!, records[1]!, forged, records[2]!]), key);
    expect(decoded.events.map((event) => event.id)).toEqual([1, 2, 4]);
    expect(decoded.damaged).toEqual([{ start, end: start + forged.byteLength, reason: "a record's signature does not match this data dir's journal key", previousId: 2, nextId: 4 }]);
    // At the end of a segment it is not taken for a torn write either: the reason says what it is.
    expect(decodeRecords(Buffer.concat([records[0]!, forged]), key).tornReason).toBe("a record's signature does not match this data dir's journal key");
  });

  it('reads unsigned records of an older version only when asked (the start that creates the key)', () => {
    const legacy = Buffer.from(encodeRecord(journalEvent(1), key));
    // The old layout: "SBJ1", length, CRC, 0, body — no MAC.
    const old = Buffer.concat([legacy.subarray(0, 16), legacy.subarray(32)]);
    old.writeUInt32LE(0x53424a31, 0);
    expect(decodeRecords(old, key).events).toEqual([]);
    expect(decodeRecords(old, key, 0, { legacy: true }).events.map((event) => event.id)).toEqual([1]);
  });
});
