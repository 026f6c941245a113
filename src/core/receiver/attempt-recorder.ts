import type { EventSummary } from '../../shared/events.js';
import type { Logger } from '../logger.js';
import type { NewAttempt } from '../store/attempts.js';
import type { EventStore } from '../store/event-store.js';

/**
 * Counts the attempts of each delivery identity (DESIGN §15) and writes them after the answer.
 * The count a redelivery is decided on comes from memory (every event stored lately, so one still
 * in the journal never waits for the database) or, once, from the event row; redeliveries of one event are numbered one after the other even when they
 * arrive together. Writes are batched per event-loop turn and wait for the event row (it may
 * still be in the journal); close() waits for them, so the log survives a restart.
 */

const KEPT = 20_000;

export class AttemptRecorder {
  /** Two generations of counts (the newest KEPT…2×KEPT events): O(1) to keep bounded. */
  private counts = new Map<number, number>();
  private older = new Map<number, number>();
  private readonly numbering = new Map<number, Promise<number>>();
  private queued: NewAttempt[] = [];
  private flushing: Promise<void> | null = null;
  private readonly writes = new Set<Promise<void>>();

  constructor(
    private readonly store: Pick<EventStore, 'recordAttempts' | 'attemptCount'>,
    private readonly logger: Logger,
  ) {}

  /**
   * A first delivery was stored: its count is known without the database, so a redelivery
   * arriving while the event is still in the journal is answered at once (DESIGN §5).
   */
  first(eventId: number): void {
    this.remember(eventId, 1);
  }

  /** The number of this delivery of `event` (2 for the first redelivery). */
  next(event: EventSummary, visible: Promise<boolean>): Promise<number> {
    const previous = this.numbering.get(event.id) ?? Promise.resolve(0);
    const numbered = previous.then(async () => {
      let count = this.counts.get(event.id) ?? this.older.get(event.id);
      if (count === undefined) {
        await visible;
        count = Math.max(1, await this.store.attemptCount(event.id));
      }
      this.remember(event.id, count + 1);
      return count + 1;
    });
    const settled = numbered.catch(() => 0);
    this.numbering.set(event.id, settled);
    void settled.then(() => {
      if (this.numbering.get(event.id) === settled) this.numbering.delete(event.id);
    });
    return numbered;
  }

  /** Queues one attempt's row; written once its event is visible. */
  record(attempt: NewAttempt, visible: Promise<boolean>): void {
    const write = visible
      .then((ok) => {
        if (!ok) return;
        this.queued.push(attempt);
        return this.flushSoon();
      })
      .catch((error: unknown) => this.logger.error(`recording attempt ${attempt.attempt} of event ${attempt.event_id}: ${(error as Error).message}`));
    this.writes.add(write);
    void write.finally(() => this.writes.delete(write));
  }

  async close(): Promise<void> {
    while (this.writes.size > 0) await Promise.all([...this.writes]);
  }

  private remember(eventId: number, count: number): void {
    if (this.counts.size >= KEPT && !this.counts.has(eventId)) {
      this.older = this.counts;
      this.counts = new Map();
    }
    this.counts.set(eventId, count);
  }

  private flushSoon(): Promise<void> {
    this.flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      const batch = this.queued;
      this.queued = [];
      this.flushing = null;
      await this.store.recordAttempts(batch);
    });
    return this.flushing;
  }
}
