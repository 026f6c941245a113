/**
 * Logs go to stderr as single lines. Callers pass facts (provider, reason, id), never headers or
 * bodies, so nothing secret can reach a log; `redactQuery` exists for the one place a URL is logged.
 */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export function consoleLogger(write: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): Logger {
  const at = () => new Date().toISOString().slice(11, 23);
  return {
    info: (message) => write(`${at()} ${message}`),
    warn: (message) => write(`${at()} warning: ${message}`),
    error: (message) => write(`${at()} error: ${message}`),
  };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
