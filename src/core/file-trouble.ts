import { statfs } from 'node:fs/promises';
import { SwitchboardError } from './errors.js';

/**
 * A failed file operation as one line a person can act on: the path, the cause in words and
 * the fix — never a bare `EACCES: permission denied, open '…'` with a stack trace (issue #22).
 */
export function fileTrouble(error: unknown, path: string, doing: string): SwitchboardError {
  const code = (error as NodeJS.ErrnoException).code;
  const [cause, hint] = FILE_CAUSES[code ?? ''] ?? [(error as Error).message, 'check the path and its permissions, or start with another --data-dir'];
  return new SwitchboardError(code === 'ENOSPC' || code === 'EDQUOT' ? 'storage_unavailable' : 'data_dir_unwritable', `cannot ${doing} ${path}: ${cause}`, {
    hint,
    cause: error,
  });
}

const FILE_CAUSES: Record<string, [cause: string, hint: string]> = {
  EACCES: ['permission denied', 'give this account read and write access to it (chmod u+rw), or start with another --data-dir'],
  EPERM: ['operation not permitted', 'give this account read and write access to it (chmod u+rw), or start with another --data-dir'],
  EROFS: ['the file system is read-only', 'start with a --data-dir on a writable disk'],
  ENOSPC: ['the disk is full', 'free some disk space; nothing acknowledged is lost, and switchboard stores it once there is room'],
  EDQUOT: ['the disk quota is used up', 'free some space within your quota'],
  EISDIR: ['a directory stands where a file belongs', 'move it out of the way'],
  ENOTDIR: ['a file stands where a directory belongs', 'move it out of the way'],
  EIO: ['the disk reported an I/O error', 'check the disk; copy the data dir elsewhere and start with --data-dir pointing there'],
  ELOOP: ['it is a symbolic link, which switchboard does not follow there', 'replace the link with the real file or directory'],
};

/** Below this much free space the embedded database cannot start (initdb, WAL segments of 16 MB). */
const ENOUGH_TO_START = 64 * 1024 * 1024;

/**
 * Whether the disk holding `path` is (nearly) full: a database that fails to open on a full disk
 * says only "PGlite failed to initialize properly", so the start-up asks the file system.
 * Null when it cannot tell.
 */
export async function freeBytes(path: string): Promise<number | null> {
  try {
    const info = await statfs(path);
    return info.bavail * info.bsize;
  } catch {
    return null;
  }
}

/** When a failed open is explained by a full disk: the one line (path, cause, fix); else null. */
export async function diskFullTrouble(error: unknown, path: string, doing: string): Promise<SwitchboardError | null> {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') return fileTrouble(error, path, doing);
  const free = await freeBytes(path);
  if (free === null || free >= ENOUGH_TO_START) return null;
  const kb = Math.floor(free / 1024);
  return new SwitchboardError('storage_unavailable', `cannot ${doing} ${path}: the disk is full (${kb} KB free; the database needs ${ENOUGH_TO_START / 1024 / 1024} MB to start)`, {
    hint: 'free some disk space, or start with a --data-dir on another disk; nothing acknowledged is lost',
    cause: error,
  });
}
