import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JournalKey } from '../../../src/core/journal/journal-key.js';
import { encodeRecord } from '../../../src/core/journal/record.js';
import { JournalSegments } from '../../../src/core/journal/segments.js';
import { memoryLogger } from '../../helpers/core.js';
import { journalEvent } from '../../helpers/journal.js';

// The journal's files (src/core/journal/segments.ts): recovery must work for any segment the
// journal can write, and say exactly what a damaged one cost.

const name = (firstId: number) => `${String(firstId).padStart(16, '0')}.log`;

describe('journal segments', () => {
  let dir: string;
  let key: JournalKey;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchboard-segments-'));
    key = await JournalKey.load(dir);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('opens a segment as large as the journal writes, hundreds of thousands of records (issue #22: a stack overflow)', async () => {
    // The smallest records a delivery makes fill a 64 MB segment with ~250,000 of them.
    const COUNT = 260_000;
    const records: Buffer[] = [];
    for (let id = 1; id <= COUNT; id++) records.push(encodeRecord(journalEvent(id, { headers: {}, verify_detail: null, payload: Buffer.from('{}') }), key));
    await writeFile(join(dir, name(1)), Buffer.concat(records));
    const logger = memoryLogger();
    const all = await JournalSegments.open(dir, logger);
    expect(all.events).toHaveLength(COUNT);
    expect(all.events[COUNT - 1]!.id).toBe(COUNT);
    expect(all.lastId).toBe(COUNT);
    // After a crash most of them are in the database already: only the rest are kept.
    const tail = await JournalSegments.open(dir, logger, COUNT - 10);
    expect(tail.events.map((event) => event.id)).toEqual(Array.from({ length: 10 }, (_, i) => COUNT - 9 + i));
    expect(tail.lastId).toBe(COUNT);
    expect(logger.lines).toEqual([]);
    // Every record's HMAC is checked on each open (issue #22.4): minutes on a loaded 2-core runner.
  }, 180_000);

  it('skips only a damaged record, reads on, and says exactly which events were lost', async () => {
    const records = Array.from({ length: 200 }, (_, i) => encodeRecord(journalEvent(101 + i), key));
    const damaged = Buffer.from(records[50]!); // event #151
    damaged.writeUInt8(damaged.readUInt8(damaged.byteLength - 2) ^ 0x10, damaged.byteLength - 2);
    records[50] = damaged;
    await writeFile(join(dir, name(101)), Buffer.concat(records));
    const logger = memoryLogger();
    const { events, lastId } = await JournalSegments.open(dir, logger, 120);
    expect(events).toHaveLength(200 - 20 - 1);
    expect(events.some((event) => event.id === 151)).toBe(false);
    expect(events.at(-1)!.id).toBe(300);
    expect(lastId).toBe(300);
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]).toMatch(/^error journal: 0000000000000101\.log has \d+ damaged bytes at offset \d+ \(a record's checksum does not match\); skipped them and read on from the next intact record — they held event #151, acknowledged but not yet in the database: lost \(1 event\)$/);
    expect(logger.lines.join('\n')).not.toMatch(/never acknowledged/);
    // Damage to a record the database has already costs nothing, and says so.
    const again = memoryLogger();
    await JournalSegments.open(dir, again, 200);
    expect(again.lines[0]).toMatch(/they held #151, already in the database: nothing lost$/);
  });

  it('cuts a torn tail off the file, so the next start does not find it again', async () => {
    const records = [encodeRecord(journalEvent(1), key), encodeRecord(journalEvent(2), key)];
    const path = join(dir, name(1));
    await writeFile(path, Buffer.concat([records[0]!, records[1]!.subarray(0, 40)]));
    const logger = memoryLogger();
    expect((await JournalSegments.open(dir, logger)).events.map((event) => event.id)).toEqual([1]);
    expect(logger.lines.join('\n')).toMatch(/not completely written .*never acknowledged/);
    expect((await stat(path)).size).toBe(records[0]!.byteLength);
    const clean = memoryLogger();
    await JournalSegments.open(dir, clean);
    expect(clean.lines).toEqual([]);
  });

  it('deletes a segment with no intact record at all', async () => {
    await writeFile(join(dir, name(1)), encodeRecord(journalEvent(1), key).subarray(0, 10));
    const { events, lastId } = await JournalSegments.open(dir, memoryLogger());
    expect(events).toEqual([]);
    expect(lastId).toBe(0);
    expect((await readdir(dir)).filter((entry) => entry.endsWith('.log'))).toEqual([]);
  });
});
