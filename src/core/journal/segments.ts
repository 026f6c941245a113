import { close, constants, ftruncateSync, open, writeSync } from 'node:fs';
import { mkdir, open as openHandle, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { SwitchboardError } from '../errors.js';
import { fileTrouble } from '../file-trouble.js';
import type { Logger } from '../logger.js';
import type { JournalEvent } from '../new-event.js';
import { privateOpenFlags, refuseUnsafeDir } from '../private-files.js';
import { JournalKey } from './journal-key.js';
import { decodeRecords, NOT_OURS, type DamagedStretch } from './record.js';

/**
 * The journal's files: `<data dir>/journal/<first id, 16 digits>.log`, append-only, owner-only.
 * A segment is closed at SEGMENT_BYTES and deleted once every record in it is in the database.
 *
 * Writes are not fsynced — the same durability as the embedded database (fsync off): what
 * was written survives a crash of switchboard, not a power loss. A failed append is cut off
 * again (ftruncate), so a delivery that was answered with an error is never applied later.
 *
 * Another account cannot steer it (issue #22.4): the directory is refused unless it is a real
 * directory of this account that nobody else can write; segments are opened without following
 * symbolic links (a link where a segment belongs is refused, never truncated through); and every
 * record is signed with the data dir's journal key (journal-key.ts), checked here on recovery.
 */

const SEGMENT_BYTES = 64 * 1024 * 1024;
const NAME = /^(\d{16})\.log$/;

const openFile = promisify(open);
const closeFile = promisify(close);

interface Segment {
  path: string;
  firstId: number;
  /** Highest id written to it (firstId - 1 while empty). */
  lastId: number;
  size: number;
}

/**
 * A synchronous write, on purpose: appending a batch to the page cache takes microseconds, while
 * an asynchronous write costs a round trip through libuv's thread pool and wakes a thread that
 * competes for the same two cores as the receiver (measured: docs/benchmarks.md).
 */
function writeAll(fd: number, buffer: Buffer, position: number): void {
  let offset = 0;
  while (offset < buffer.byteLength) offset += writeSync(fd, buffer, offset, buffer.byteLength - offset, position + offset);
}

export interface RecoveredJournal {
  segments: JournalSegments;
  /** What signs the records appended from now on. */
  key: JournalKey;
  /** Every intact record past the applied position, in id order. */
  events: JournalEvent[];
  /** The highest id an intact record carries (0 without any). */
  lastId: number;
}

export class JournalSegments {
  private current: (Segment & { fd: number }) | null = null;

  private constructor(
    readonly dir: string,
    private readonly closed: Segment[],
  ) {}

  /**
   * Reads every segment, keeping the records past `appliedId` (the database has the others).
   * A torn tail (a crash in the middle of a write) is logged and cut off, so the next append
   * does not follow half a record. A damaged record in the middle (a flipped byte) costs only
   * itself: decoding resumes at the next intact record, and the log says which ids were lost.
   */
  static async open(dir: string, logger: Logger, appliedId = 0): Promise<RecoveredJournal> {
    await refuseUnsafeDir(dir, 'journal directory');
    await mkdir(dir, { recursive: true, mode: 0o700 }).catch((error) => Promise.reject(fileTrouble(error, dir, 'create the journal directory')));
    await refuseUnsafeDir(dir, 'journal directory');
    const key = await JournalKey.load(dir);
    const names = (await readdir(dir).catch((error) => Promise.reject(fileTrouble(error, dir, 'read the journal directory')))).filter((name) => NAME.test(name)).sort();
    const segments: Segment[] = [];
    const events: JournalEvent[] = [];
    let lastId = 0;
    for (const name of names) {
      const path = join(dir, name);
      const bytes = await readSegment(path);
      const firstId = Number(NAME.exec(name)![1]);
      const decoded = decodeRecords(bytes, key, appliedId, { legacy: key.created });
      for (const stretch of decoded.damaged) logger.error(describeDamage(name, firstId, stretch, appliedId));
      if (decoded.tornReason) {
        const tail = bytes.byteLength - decoded.validBytes;
        if (decoded.tornReason === NOT_OURS) {
          logger.error(`journal: ${name} ends in ${tail} bytes whose signature does not match this data dir's journal key (${NOT_OURS}): skipped — switchboard never wrote them`);
        } else {
          logger.warn(
            `journal: ${name} ends in a record that was not completely written (${decoded.tornReason}; ` +
              `${tail} bytes, most likely from a crash during a write): skipped — it was never acknowledged`,
          );
        }
        // Appends never go after it (each start writes a new segment): a segment that cannot be cut
        // is read the same way at the next start, so a warning is enough (issue #22.5).
        await cutSegment(path, decoded.validBytes).catch((error: Error) => logger.warn(`journal: ${error.message} — it is skipped again at the next start (${(error as SwitchboardError).hint ?? 'fix its permissions'})`));
      }
      if (decoded.lastId === null) {
        await unlink(path).catch((error) => Promise.reject(fileTrouble(error, path, 'delete the empty journal segment')));
        continue;
      }
      segments.push({ path, firstId, lastId: decoded.lastId, size: decoded.validBytes });
      lastId = Math.max(lastId, decoded.lastId);
      // One at a time: a segment holds up to hundreds of thousands of records, past what an
      // argument spread can pass (issue #22: a crash with 125,000 of them never started again).
      for (const event of decoded.events) events.push(event);
    }
    events.sort((a, b) => a.id - b.id);
    return { segments: new JournalSegments(dir, segments), key, events, lastId };
  }

  /** Appends whole records (ids firstId…lastId); on failure nothing of them stays in the file. */
  async append(records: Buffer, firstId: number, lastId: number): Promise<void> {
    // After a failed rotation `current` is null: the next append tries to create the segment again.
    if (!this.current || this.current.size >= SEGMENT_BYTES) await this.rotate(firstId);
    const segment = this.current!;
    try {
      writeAll(segment.fd, records, segment.size);
    } catch (error) {
      try {
        ftruncateSync(segment.fd, segment.size);
      } catch {
        // the write failed and so does the cut: the record is torn, which the next start detects
      }
      throw fileTrouble(error, segment.path, 'append to the journal segment');
    }
    segment.size += records.byteLength;
    segment.lastId = lastId;
  }

  private async rotate(firstId: number): Promise<void> {
    const path = join(this.dir, `${String(firstId).padStart(16, '0')}.log`);
    const fd = await openFile(path, privateOpenFlags(constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC), 0o600).catch((error: unknown) =>
      Promise.reject(fileTrouble(error, path, 'create the journal segment')),
    );
    if (this.current) {
      const { fd: previous, ...segment } = this.current;
      this.closed.push(segment);
      await closeFile(previous).catch(() => {});
    }
    this.current = { path, firstId, lastId: firstId - 1, size: 0, fd };
  }

  /** Deletes the closed segments whose every record is applied (id ≤ appliedId). */
  async release(appliedId: number): Promise<void> {
    while (this.closed.length > 0 && this.closed[0]!.lastId <= appliedId) {
      const segment = this.closed.shift()!;
      await unlink(segment.path).catch(() => {});
    }
  }

  /** Closes the open segment; deletes every segment whose records are all applied. */
  async close(appliedId: number): Promise<void> {
    if (this.current) {
      const { fd, ...segment } = this.current;
      this.current = null;
      this.closed.push(segment);
      await closeFile(fd).catch(() => {});
    }
    await this.release(appliedId);
  }
}

/** A segment's bytes, never through a symbolic link, and only from a regular file. */
async function readSegment(path: string): Promise<Buffer> {
  let handle;
  try {
    handle = await openHandle(path, privateOpenFlags(constants.O_RDONLY));
  } catch (error) {
    throw fileTrouble(error, path, 'read the journal segment');
  }
  try {
    if (!(await handle.stat()).isFile()) throw fileTrouble(Object.assign(new Error('not a regular file'), { code: 'EISDIR' }), path, 'read the journal segment');
    return await handle.readFile();
  } catch (error) {
    throw (error as Error).name === 'SwitchboardError' ? error : fileTrouble(error, path, 'read the journal segment');
  } finally {
    await handle.close();
  }
}

/** Cuts a torn tail off (opened for writing only now: a read-only segment is still read, and this says why it cannot be cut). */
async function cutSegment(path: string, length: number): Promise<void> {
  try {
    const handle = await openHandle(path, privateOpenFlags(constants.O_WRONLY));
    try {
      await handle.truncate(length);
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw fileTrouble(error, path, 'cut the torn record off the journal segment');
  }
}

/**
 * What a damaged stretch cost, exactly: ids are given in append order, so the records it held
 * are the ids between the intact records on either side. Those the database already has are
 * not lost.
 */
function describeDamage(name: string, firstId: number, stretch: DamagedStretch, appliedId: number): string {
  const from = (stretch.previousId ?? firstId - 1) + 1;
  const to = stretch.nextId - 1;
  const where = `journal: ${name} has ${stretch.end - stretch.start} damaged bytes at offset ${stretch.start} (${stretch.reason}); skipped them and read on from the next intact record`;
  if (to < from) return `${where} — no record is missing around them`;
  const ids = (a: number, b: number) => (a === b ? `#${a}` : `#${a}–#${b}`);
  if (to <= appliedId) return `${where} — they held ${ids(from, to)}, already in the database: nothing lost`;
  const lostFrom = Math.max(from, appliedId + 1);
  return `${where} — they held event ${ids(lostFrom, to)}, acknowledged but not yet in the database: lost (${to - lostFrom + 1} event${to === lostFrom ? '' : 's'})`;
}
