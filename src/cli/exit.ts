/**
 * How the CLI ends (docs/cli.md): 0 done; 1 the operation failed (a replay target refused or
 * unreachable, an import with errors, an error the server reported); 2 usage, or nothing to
 * talk to (no running instance, a refused token). Commands throw `CliError`; `main` prints it
 * and exits, so no command calls `process.exit` itself.
 */

import { terminalSafeBlock } from './terminal-safe.js';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: typeof EXIT_FAILED | typeof EXIT_USAGE,
    /** What to do about it, printed as a second line `  fix: …`. */
    readonly hint?: string,
    /** Print the message as is, without the `switchboard: ` prefix. */
    readonly bare = false,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** `cause`: what went wrong underneath (its stack trace is printed with SWITCHBOARD_DEBUG=1). */
export function usageError(message: string, hint?: string, cause?: unknown): CliError {
  const error = new CliError(message, EXIT_USAGE, hint);
  if (cause !== undefined) error.cause = cause;
  return error;
}

export function formatCliError(error: CliError): string {
  // A server's message may quote what a sender wrote: shown terminal-safe like everything else.
  const message = terminalSafeBlock(error.message);
  const head = error.bare ? message : `switchboard: ${message}`;
  return `${head}${error.hint ? `\n  fix: ${terminalSafeBlock(error.hint)}` : ''}\n`;
}
