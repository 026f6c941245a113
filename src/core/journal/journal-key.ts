import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { createHmac, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { SwitchboardError } from '../errors.js';
import { fileTrouble } from '../file-trouble.js';
import { privateOpenFlags } from '../private-files.js';

/**
 * The data dir's journal key (issue #22.4): 32 random bytes in `<data dir>/journal/journal.key`,
 * 0600, created on first start. Every journal record carries an HMAC-SHA256 under it (record.ts),
 * checked at recovery: a record another account wrote — or copied in from another data dir —
 * does not check, and is skipped and reported like a damaged one, so it can never be stored as
 * a `signed`, verified event. The key is refused unless it is a regular file of this account
 * that nobody else can read.
 */

export const JOURNAL_KEY_FILE = 'journal.key';
const KEY_BYTES = 32;
/** Bytes of the HMAC kept in a record (128 bits: forging one takes 2^128 tries). */
export const MAC_BYTES = 16;

export class JournalKey {
  private constructor(
    private readonly key: Buffer,
    /** True when this start created the key: records of an older version (unsigned) are then accepted once. */
    readonly created: boolean,
  ) {}

  /** A key that is not kept anywhere (tests of the record format). */
  static ephemeral(): JournalKey {
    return new JournalKey(randomBytes(KEY_BYTES), false);
  }

  /** Reads `<dir>/journal.key`, creating it (0600, exclusively, never through a link) when absent. */
  static async load(dir: string): Promise<JournalKey> {
    const path = join(dir, JOURNAL_KEY_FILE);
    const created = await create(path);
    if (created) return new JournalKey(created, true);
    let handle;
    try {
      handle = await open(path, privateOpenFlags(constants.O_RDONLY));
    } catch (error) {
      throw fileTrouble(error, path, 'read the journal key');
    }
    try {
      const info = await handle.stat();
      const uid = typeof process.getuid === 'function' ? process.getuid() : null;
      const problem = !info.isFile()
        ? 'it is not a regular file'
        : uid !== null && info.uid !== uid
          ? `it belongs to another account (uid ${info.uid})`
          : uid !== null && info.mode & 0o077
            ? `other accounts can read or write it (mode ${(info.mode & 0o777).toString(8)})`
            : info.size !== KEY_BYTES
              ? `it holds ${info.size} bytes, not ${KEY_BYTES}`
              : null;
      if (problem) {
        throw new SwitchboardError('data_dir_unsafe', `refusing the journal key ${path}: ${problem}`, {
          hint: `if this account made it, make it private (chmod 600 ${path}); if not, another account had access to this data dir: start with another --data-dir`,
        });
      }
      return new JournalKey(await handle.readFile(), false);
    } finally {
      await handle.close();
    }
  }

  /** The record's MAC: HMAC-SHA256 over its header (magic, length, CRC) and body, first MAC_BYTES bytes. */
  mac(header: Uint8Array, body: Uint8Array): Buffer {
    return createHmac('sha256', this.key).update(header).update(body).digest().subarray(0, MAC_BYTES);
  }
}

async function create(path: string): Promise<Buffer | null> {
  const key = randomBytes(KEY_BYTES);
  let handle;
  try {
    handle = await open(path, privateOpenFlags(constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL), 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return null;
    throw fileTrouble(error, path, 'create the journal key');
  }
  try {
    await handle.writeFile(key);
  } finally {
    await handle.close();
  }
  return key;
}
