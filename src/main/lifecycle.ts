import { createWriteStream, mkdirSync, statSync, truncateSync } from 'node:fs';
import { dirname } from 'node:path';
import type { App } from 'electron';
import { consoleLogger, type Logger } from '../core/logger.js';
import type { Switchboard, SwitchboardOptions } from '../core/switchboard.js';
import { describeStartupFailure, type StartupFailure } from './error-screen.js';

/**
 * The core's life inside the Electron main process: started once the app is ready, stopped
 * (deliveries finished, database closed) before the process exits, whatever started the quit:
 * the tray's Quit, Cmd+Q, a logout, or Ctrl+C in the terminal running `npm start`.
 */

export type CoreStart = { ok: true; sb: Switchboard } | { ok: false; failure: StartupFailure; error: unknown };

export async function startCore(
  create: (options: SwitchboardOptions) => Switchboard,
  options: () => SwitchboardOptions,
  logPath: string,
  logger: Logger,
): Promise<CoreStart> {
  try {
    // Building the options may fail too (a damaged secrets file): same screen.
    const sb = create(options());
    await sb.start();
    logger.info(`receiving on ${sb.url.receiver}; control (UI API, MCP) on ${sb.url.control}`);
    return { ok: true, sb };
  } catch (error) {
    const failure = describeStartupFailure(error, logPath);
    logger.error(`${failure.message}${failure.hint ? ` — fix: ${failure.hint}` : ''}`);
    if (failure.code === 'internal') logger.error((error as Error)?.stack ?? String(error));
    return { ok: false, failure, error };
  }
}

/**
 * Holds the first quit until `stop` has finished (bounded by the core's own timeouts), then
 * lets it through. A second quit while stopping is the impatient user: it is not delayed again.
 */
export function setupQuit(
  app: Pick<App, 'on' | 'quit'>,
  stop: () => Promise<void>,
  logger: Logger,
  signals: Pick<NodeJS.Process, 'once'> = process,
): void {
  let state: 'running' | 'stopping' | 'stopped' = 'running';
  app.on('will-quit', (event) => {
    if (state === 'stopped') return;
    event.preventDefault();
    if (state === 'stopping') return;
    state = 'stopping';
    stop()
      .catch((error: Error) => logger.error(`shutdown: ${error.message}`))
      .finally(() => {
        state = 'stopped';
        app.quit();
      });
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) signals.once(signal, () => app.quit());
}

const MAX_LOG_BYTES = 5 * 1024 * 1024;

/**
 * Lines to stderr (seen under `npm start`) and to a file (the only place a packaged app's log
 * can be read). The file starts over past 5 MiB; the core never logs secrets (logger.ts).
 */
export function fileLogger(path: string): Logger {
  mkdirSync(dirname(path), { recursive: true });
  try {
    if (statSync(path).size > MAX_LOG_BYTES) truncateSync(path, 0);
  } catch {
    // no log yet
  }
  const file = createWriteStream(path, { flags: 'a', mode: 0o600 });
  file.on('error', () => {
    // A log we cannot write must not take the app down.
  });
  return consoleLogger((line) => {
    process.stderr.write(`${line}\n`);
    file.write(`${new Date().toISOString().slice(0, 10)} ${line}\n`);
  });
}
