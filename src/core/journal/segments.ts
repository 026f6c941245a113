import { close, ftruncateSync, open, writeSync } from 'node:fs';
import { mkdir, readdir, readFile, truncate, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../logger.js';
import { decodeRecords, type JournalEvent } from './record.js';

/**
 * The journal's files: `<data dir>/journal/<first id, 16 digits>.log`, append-only, owner-only.
 * A segment is closed at SEGMENT_BYTES and deleted once every record in it is in the database.
 *
 * Writes are not fsynced — the same durability as the embedded database (fsync off): what
 * was written survives a crash of switchboard, not a power loss. A failed append is cut off
 * again (ftruncate), so a delivery that was answered with an error is never applied later.
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
  /** Every intact record still in the journal, in id order (applied ones included). */
  events: JournalEvent[];
}

export class JournalSegments {
  private current: (Segment & { fd: number }) | null = null;

  private constructor(
    readonly dir: string,
    private readonly closed: Segment[],
  ) {}

  /**
   * Reads every segment. A torn tail (a crash in the middle of a write) is logged and cut off,
   * so the next append does not follow half a record.
   */
  static async open(dir: string, logger: Logger): Promise<RecoveredJournal> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const names = (await readdir(dir)).filter((name) => NAME.test(name)).sort();
    const segments: Segment[] = [];
    const events: JournalEvent[] = [];
    for (const name of names) {
      const path = join(dir, name);
      const bytes = await readFile(path);
      const decoded = decodeRecords(bytes);
      if (decoded.tornReason) {
        logger.warn(
          `journal: ${name} ends in a record that was not completely written (${decoded.tornReason}; ` +
            `${bytes.byteLength - decoded.validBytes} bytes, most likely from a crash during a write): ` +
            'skipped — it was never acknowledged',
        );
        await truncate(path, decoded.validBytes);
      }
      if (decoded.events.length === 0) {
        await unlink(path);
        continue;
      }
      const firstId = Number(NAME.exec(name)![1]);
      segments.push({ path, firstId, lastId: decoded.events[decoded.events.length - 1]!.id, size: decoded.validBytes });
      events.push(...decoded.events);
    }
    events.sort((a, b) => a.id - b.id);
    return { segments: new JournalSegments(dir, segments), events };
  }

  /** Appends whole records (ids firstId…lastId); on failure nothing of them stays in the file. */
  async append(records: Buffer, firstId: number, lastId: number): Promise<void> {
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
      throw error;
    }
    segment.size += records.byteLength;
    segment.lastId = lastId;
  }

  private async rotate(firstId: number): Promise<void> {
    const path = join(this.dir, `${String(firstId).padStart(16, '0')}.log`);
    const fd = await openFile(path, 'w', 0o600);
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
