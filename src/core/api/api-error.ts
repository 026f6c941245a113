import type { ApiError } from '../../shared/api.js';
import { isSwitchboardError, type ErrorCode } from '../errors.js';
import type { Logger } from '../logger.js';

/**
 * Any failure → the contract's `{ code, message, hint? }`, for both UI transports. Expected
 * failures keep their code and words; anything else is logged here and reported as `internal`
 * without its message, which could name a file, a query or worse.
 */
export function toApiError(error: unknown, logger: Logger, where: string): ApiError & { code: ErrorCode } {
  if (isSwitchboardError(error)) {
    return { code: error.code, message: error.message, ...(error.hint ? { hint: error.hint } : {}) };
  }
  logger.error(`${where}: ${(error as Error)?.stack ?? String(error)}`);
  return { code: 'internal', message: 'internal error (see the switchboard log)' };
}
