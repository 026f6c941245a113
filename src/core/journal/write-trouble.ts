import { access, constants } from 'node:fs/promises';
import { isSwitchboardError, type SwitchboardError } from '../errors.js';
import { fileTrouble } from '../file-trouble.js';
import type { Logger } from '../logger.js';

/**
 * Why the journal cannot be written — a failed append, or its directory found unwritable at
 * start — kept until an append works again: /healthz answers 503 with it (issue #22.5), and
 * the log says it once when it starts and once when it ends, not once per delivery.
 */
export class WriteTrouble {
  /** `probe`: found by checking the directory, so a later check may clear it. */
  private current: { error: SwitchboardError; probe: boolean } | null = null;

  constructor(
    private readonly dir: string,
    private readonly logger: Logger,
  ) {}

  /**
   * Why deliveries cannot be stored right now, as one line (path, cause, fix), or null. A
   * problem found by checking the directory is checked again here, so fixing the permissions
   * makes the instance healthy without waiting for a delivery.
   */
  async line(): Promise<string | null> {
    if (this.current?.probe) await this.check();
    const error = this.current?.error;
    return error ? `${error.message}${error.hint ? ` — ${error.hint}` : ''}` : null;
  }

  /** Whether this account may write the journal directory (a 0500 dir: every append would fail). */
  async check(): Promise<void> {
    try {
      await access(this.dir, constants.W_OK);
      if (this.current?.probe) {
        this.current = null;
        this.logger.info(`journal: ${this.dir} is writable again; deliveries are stored`);
      }
    } catch (error) {
      if (!this.current) this.note(fileTrouble(error, this.dir, 'write to the journal directory'), true);
    }
  }

  /** An append failed with `error`. */
  appendFailed(error: unknown): void {
    this.note(isSwitchboardError(error) ? error : fileTrouble(error, this.dir, 'write to the journal in'), false);
  }

  /** An append worked. */
  appendWorked(): void {
    if (!this.current) return;
    this.current = null;
    this.logger.info('journal: writing works again; deliveries are stored');
  }

  private note(error: SwitchboardError, probe: boolean): void {
    const first = this.current === null;
    this.current = { error, probe };
    if (first) this.logger.error(`journal: ${error.message} — deliveries are answered 503 until it works again (fix: ${error.hint ?? 'see above'})`);
  }
}

/** The system error code under a failure (EACCES, ENOSPC…), for the sender's short answer. */
export function errnoOf(error: unknown): string {
  const cause = isSwitchboardError(error) ? error.cause : error;
  return (cause as NodeJS.ErrnoException | undefined)?.code ?? 'error';
}
