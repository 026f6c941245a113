import { readFile } from 'node:fs/promises';
import { watchPath } from '../file-watch.js';
import type { Logger } from '../logger.js';

/**
 * Follows `<data dir>/control-token` while switchboard runs. The token guards every stored
 * payload and replay; when it leaks, people replace the file and expect the old token to stop
 * working — a token kept in memory until the next restart would leave it valid without a word.
 * So a replaced token applies at once; an unusable one (too short, whitespace inside) is refused
 * in one line and the previous token kept; a deleted file keeps the running token. The token
 * itself is never logged.
 */

export const MIN_TOKEN_LENGTH = 32;

/** Why a token read from the file cannot be used, or null. */
export function unusableTokenReason(token: string): string | null {
  return token.length < MIN_TOKEN_LENGTH || /\s/.test(token)
    ? `a control token is one line of at least ${MIN_TOKEN_LENGTH} characters without spaces (e.g. \`openssl rand -base64 32\`)`
    : null;
}

export function watchControlToken(options: { path: string; logger: Logger; current: () => string; apply: (token: string) => void }): { close(): void } {
  const { path, logger } = options;
  let reported: string | undefined;
  // An unusable token is confirmed by a second read: a truncate-then-write save can be caught half-way.
  let unconfirmed: string | undefined;
  const report = (level: 'warn' | 'error', message: string) => {
    if (reported === message) return;
    reported = message;
    logger[level](message);
  };
  const watch = watchPath(path, async () => {
    let token: string;
    try {
      token = (await readFile(path, 'utf8')).trim();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') report('warn', `${path} was removed — the running switchboard keeps its token (the next start creates a new file)`);
      else report('error', `${path} not applied: cannot be read (${code ?? (error as Error).message}) — keeping the previous token`);
      return;
    }
    if (token === options.current()) {
      reported = undefined;
      return;
    }
    const unusable = unusableTokenReason(token);
    if (unusable) {
      if (unconfirmed !== token) {
        unconfirmed = token;
        watch.recheck();
        return;
      }
      report('error', `${path} not applied: ${unusable} — keeping the previous token`);
      return;
    }
    reported = undefined;
    unconfirmed = undefined;
    options.apply(token);
    logger.info(`${path} replaced: the previous token no longer works; reconnect the web UI and MCP clients with the new one`);
  }, { onError: (error) => logger.error(`${path}: ${error.message}`) });
  return watch;
}
