import { isSwitchboardError } from '../core/errors.js';

/**
 * What a failed start says (port in use, bad config, database locked or unreachable, data dir
 * not writable): the problem and the fix, never a blank window or a bare stack trace. The
 * start-up screen (startup-screen.ts) shows it, with a way to try again or quit.
 */

export interface StartupFailure {
  code: string;
  message: string;
  hint?: string;
  /** Overrides the title the code gives (failureTitle). */
  title?: string;
}

export function describeStartupFailure(error: unknown, logPath: string): StartupFailure {
  if (isSwitchboardError(error)) {
    const hint = error.hint ?? (error.code === 'database_unavailable' ? `Try again. If it keeps failing, the log has the details: ${logPath}` : undefined);
    return { code: error.code, message: error.message, ...(hint ? { hint } : {}) };
  }
  return {
    code: 'internal',
    message: `switchboard failed to start: ${error instanceof Error ? error.message : String(error)}`,
    hint: `the log has the details: ${logPath}`,
  };
}

/**
 * The database worker crashed under a running core and a new one would not start either: the
 * window must not stay on a UI whose every call now fails.
 */
export function describeDatabaseLoss(crash: Error, restart: unknown, logPath: string): StartupFailure {
  return {
    code: 'database_unavailable',
    title: 'The database stopped',
    message: `${crash.message}, and a new database worker could not be started: ${restart instanceof Error ? restart.message : String(restart)}`,
    hint: `Try again restarts switchboard; deliveries it acknowledged meanwhile are in its journal and are stored then. If it happens again, the log has the details: ${logPath}`,
  };
}

const TITLES: Record<string, string> = {
  port_in_use: 'A port switchboard needs is already in use',
  config_invalid: 'The configuration has a problem',
  database_unavailable: 'The database cannot be opened',
  storage_unavailable: 'The database cannot be opened',
  data_dir_unwritable: 'The data folder is not writable',
  data_dir_unsafe: 'Another account could change the data folder',
};

export function failureTitle(code: string): string {
  return TITLES[code] ?? 'switchboard could not start';
}
