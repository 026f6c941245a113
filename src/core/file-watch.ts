import { unwatchFile, watch, watchFile, type FSWatcher, type Stats } from 'node:fs';
import { basename, dirname } from 'node:path';

/**
 * Follows one file on disk, however it is changed, and calls `onChange` (debounced, one run at a
 * time) — for files people edit by hand while switchboard runs (config.json, control-token).
 *
 * Why the *directory* is watched, filtered by name: `fs.watch` on a file follows its inode, and
 * an atomic save (our own UI/API saves, vim, VS Code, JetBrains) renames a new file over the old
 * one, after which a file watch reports nothing ever again. A directory watch also sees the file
 * appear when it did not exist at start, and delete + create.
 *
 * Why a stat poll as well (`fs.watchFile`, by path, every few seconds): directory events miss a
 * file that is a symlink into another directory (dotfiles), network and container mounts, and a
 * directory that does not exist yet. Both feed one debounced run; `onChange` must therefore be
 * idempotent (read the file, compare with what is applied, do nothing when equal).
 */

export interface FileWatch {
  /** Runs `onChange` again after the debounce (e.g. to confirm a half-written file). */
  recheck(): void;
  close(): void;
}

export const FILE_DEBOUNCE_MS = 150;
export const FILE_POLL_MS = 2_000;

export function watchPath(
  path: string,
  onChange: () => Promise<void>,
  options: { debounceMs?: number; pollMs?: number; onError?: (error: Error) => void } = {},
): FileWatch {
  const debounceMs = options.debounceMs ?? FILE_DEBOUNCE_MS;
  const name = basename(path);
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let rerun = false;
  let dirWatcher: FSWatcher | undefined;

  const schedule = () => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(run, debounceMs);
  };

  const run = () => {
    if (running) {
      rerun = true;
      return;
    }
    watchDirectory();
    running = onChange()
      .catch((error: Error) => options.onError?.(error))
      .finally(() => {
        running = undefined;
        if (rerun && !closed) {
          rerun = false;
          schedule();
        }
      });
  };

  const watchDirectory = () => {
    if (dirWatcher || closed) return;
    try {
      dirWatcher = watch(dirname(path), { persistent: false }, (_event, file) => {
        // Some platforms omit the name; then any change in the directory may be ours.
        if (file === null || file === name) schedule();
      });
      dirWatcher.on('error', () => {
        // The directory itself went away; the poll notices when it (and the file) come back.
        dirWatcher?.close();
        dirWatcher = undefined;
      });
    } catch {
      // The directory does not exist (yet): the poll covers it, and the next run retries this.
    }
  };

  const onStat = (current: Stats, previous: Stats) => {
    if (current.mtimeMs !== previous.mtimeMs || current.ino !== previous.ino || current.size !== previous.size || current.nlink !== previous.nlink) {
      schedule();
    }
  };

  watchDirectory();
  // A first run closes the window between the caller's start-up read and the watch.
  schedule();
  watchFile(path, { persistent: false, interval: options.pollMs ?? FILE_POLL_MS }, onStat);

  return {
    recheck: schedule,
    close() {
      closed = true;
      clearTimeout(timer);
      dirWatcher?.close();
      unwatchFile(path, onStat);
    },
  };
}
