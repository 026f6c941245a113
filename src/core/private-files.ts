import { constants } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { chmod, lstat, open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SwitchboardError } from './errors.js';

/**
 * Defends against other local accounts reading or changing what switchboard stores: payloads
 * and headers in the database (its WAL included), the control token, config.json's secrets,
 * exports. The embedded database creates its files 0666 and directories 0755 under the default
 * umask, so on a shared machine anyone could read every webhook, or edit a stored one.
 *
 * Two layers: the process umask (0077) makes everything created from now on owner-only, and
 * `fixDataDirPermissions` repairs a data dir created by an older version (or by hand).
 */

export const PRIVATE_UMASK = 0o077;
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/**
 * Owner-only for every file this process creates from now on. Before the database opens: PGlite
 * (and its worker thread, which shares the process umask) creates files with mode 0666.
 * Worker threads cannot set the umask; there the process that started them must have.
 */
export function usePrivateUmask(): void {
  if (isMainThread) process.umask(PRIVATE_UMASK);
}

export interface PermissionFix {
  dirs: number;
  files: number;
  /** Paths that could not be changed (e.g. owned by another account), with why. */
  failed: string[];
}

/**
 * What switchboard keeps in a data dir. Only these are repaired recursively: a data dir may be
 * one a person chose (`--data-dir`), or Electron's userData, where other things live; making the
 * dir itself 0700 already shuts everything in it off from other accounts.
 */
const OWNED_ENTRIES = [
  'pgdata',
  'pgdata.lock',
  // the ingest journal (src/core/journal): acknowledged payloads before they reach pgdata
  'journal',
  'control-url',
  'config.json',
  'control-token',
  // proves to the CLI that an instance owns this data dir (src/core/control/auth.ts)
  'identity-key',
  // the desktop shell's encrypted secrets (src/main/secrets.ts)
  'secrets.json',
];

/**
 * Makes `dataDir` 0700 and what switchboard keeps in it owner-only (directories 0700, files
 * 0600), touching only what is wider. Symbolic links are neither followed nor changed. Missing
 * entries (a file deleted while we walk, e.g. a WAL segment recycled) are skipped.
 */
export async function fixDataDirPermissions(dataDir: string): Promise<PermissionFix> {
  const fixed: PermissionFix = { dirs: 0, files: 0, failed: [] };
  const visit = async (path: string, recurse: boolean): Promise<void> => {
    const failed = (error: NodeJS.ErrnoException): false => {
      if (error.code !== 'ENOENT') fixed.failed.push(`${path} (${error.code ?? error.message})`);
      return false;
    };
    const info = await lstat(path).catch(failed);
    if (!info) return;
    if (info.isSymbolicLink()) return;
    const mode = info.mode & 0o777;
    if (info.isDirectory()) {
      // The directory first: once it is 0700 nothing below it is reachable by others.
      if (mode & ~DIR_MODE && (await chmod(path, mode & DIR_MODE).then(() => true, failed))) fixed.dirs++;
      const entries = recurse ? await readdir(path).catch((error: NodeJS.ErrnoException) => (failed(error), [])) : [];
      await Promise.all(entries.map((entry) => visit(join(path, entry), true)));
    } else if (mode & ~FILE_MODE && (await chmod(path, mode & FILE_MODE).then(() => true, failed))) {
      fixed.files++;
    }
  };
  await visit(dataDir, false);
  await Promise.all(OWNED_ENTRIES.map((entry) => visit(join(dataDir, entry), true)));
  return fixed;
}

/** The one log line for a repaired data dir; null when nothing needed fixing. */
export function describePermissionFix(dataDir: string, fixed: PermissionFix): string | null {
  const parts: string[] = [];
  if (fixed.dirs > 0 || fixed.files > 0) {
    parts.push(
      `made ${dataDir} private to this account (${fixed.dirs} ${fixed.dirs === 1 ? 'directory' : 'directories'} set to 0700, ` +
        `${fixed.files} ${fixed.files === 1 ? 'file' : 'files'} to 0600); other accounts could read them`,
    );
  }
  if (fixed.failed.length > 0) {
    parts.push(`could not make ${fixed.failed.length} path(s) private, e.g. ${fixed.failed[0]}: fix them with chmod`);
  }
  return parts.length > 0 ? `permissions: ${parts.join('; ')}` : null;
}

// ---------------------------------------------------------------------------------------------
// Another account must not be able to steer what switchboard writes or reads (issue #22.4).

/**
 * Opens never follow a symbolic link at the last component: a link planted where a segment,
 * keys.bloom(.tmp), control-token or control-url belongs would make switchboard truncate or
 * overwrite the file it points to, or read records from it. (0 where the platform has none.)
 */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const myUid = (): number | null => (typeof process.getuid === 'function' ? process.getuid() : null);

function unsafe(message: string, hint: string): SwitchboardError {
  return new SwitchboardError('data_dir_unsafe', message, { hint });
}

/**
 * Refuses a directory another account could write or has made: not owned by this account, or
 * writable by its group or by others (sticky or not — anyone who can create entries there can
 * plant a link or a journal record before switchboard looks). `follow` is for the data dir
 * itself, which a person may have pointed anywhere with a link of their own; the directories
 * inside it (the journal) must be real directories. A missing directory is fine: it is created
 * 0700. Not on Windows, which has neither owners by uid nor these modes.
 */
export async function refuseUnsafeDir(path: string, what: string, { follow = false }: { follow?: boolean } = {}): Promise<void> {
  const uid = myUid();
  if (uid === null) return;
  const info = await (follow ? stat(path) : lstat(path)).catch((error: NodeJS.ErrnoException) => {
    // Missing, or a file where a parent directory belongs: the caller's own check (creating it)
    // says what is wrong there, in its words.
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
    throw error;
  });
  if (!info) return;
  if (info.isSymbolicLink()) {
    throw unsafe(`refusing the ${what} ${path}: it is a symbolic link, which switchboard does not follow there`, 'replace the link with a real directory (mkdir -m 700), or start with another --data-dir');
  }
  if (!info.isDirectory()) return; // the caller's own check says what stands there
  if (info.uid !== uid) {
    throw unsafe(
      `refusing the ${what} ${path}: it belongs to another account (uid ${info.uid}), which could read or change what switchboard stores there`,
      `use a directory of your own (start with another --data-dir), or give it to this account: chown ${uid} ${path}`,
    );
  }
  if (info.mode & 0o022) {
    throw unsafe(
      `refusing the ${what} ${path}: it is writable by ${info.mode & 0o002 ? 'other accounts' : 'its group'} (mode ${(info.mode & 0o7777).toString(8).padStart(4, '0')}), who could have planted files in it`,
      `check what is in it, then make it private: chmod 700 ${path} — or start with another --data-dir`,
    );
  }
}

/** Reads a file switchboard keeps in the data dir, refusing a symbolic link there (ELOOP). */
export async function readPrivateFile(path: string): Promise<Buffer> {
  const handle = await open(path, constants.O_RDONLY | NOFOLLOW);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/**
 * Writes a file of the data dir owner-only, refusing a symbolic link at `path` (ELOOP) instead of
 * writing through it. The mode is set on the open file, never by name.
 */
export async function writePrivateFile(path: string, data: string | Uint8Array): Promise<void> {
  const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | NOFOLLOW, FILE_MODE);
  try {
    await handle.chmod(FILE_MODE);
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
}

/** `open` flags for a file of the data dir: never through a symbolic link. */
export const privateOpenFlags = (flags: number): number => flags | NOFOLLOW;
