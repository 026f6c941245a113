/**
 * One error type for every expected failure in the core. Each transport (receiver HTTP, control
 * API, MCP, IPC) maps `code` to its own shape in one place; nothing else inspects messages.
 * Messages are written for the person reading them and never contain a secret.
 */
export const ERROR_CODES = [
  'not_found',
  'invalid_argument',
  'replay_failed',
  'rate_limited',
  'internal',
  'unauthorized',
  'forbidden',
  'storage_unavailable',
  'config_invalid',
  'port_in_use',
  'database_unavailable',
  'data_dir_unwritable',
  /** The data dir (or its journal) could be written by another account: refused at start. */
  'data_dir_unsafe',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export class SwitchboardError extends Error {
  readonly code: ErrorCode;
  /** What the user should do about it, when there is something to do. */
  readonly hint?: string;

  constructor(code: ErrorCode, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'SwitchboardError';
    this.code = code;
    this.hint = options.hint;
  }
}

export function isSwitchboardError(error: unknown): error is SwitchboardError {
  return error instanceof SwitchboardError;
}

/**
 * "No such event", worded once for every face (UI API, CLI, MCP tools and resources, replays):
 * an agent or a script that matches on it sees the same sentence wherever it asked.
 */
export function eventNotFound(id: number): SwitchboardError {
  return new SwitchboardError('not_found', `there is no event ${id} (never stored, or removed by retention or a clear)`);
}

/** HTTP status for a code, used by the control API and the receiver. */
export function httpStatusFor(code: ErrorCode): number {
  switch (code) {
    case 'not_found':
      return 404;
    case 'invalid_argument':
    case 'config_invalid':
      return 400;
    case 'unauthorized':
      return 401;
    case 'forbidden':
      return 403;
    case 'rate_limited':
      return 429;
    case 'replay_failed':
      return 502;
    case 'storage_unavailable':
    case 'database_unavailable':
      return 503;
    default:
      return 500;
  }
}
