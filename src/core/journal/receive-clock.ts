/**
 * The receive time of the events appended in one turn of the event loop: one per write, as a
 * group commit gave one now() per transaction. Keyset pagination is on (received_at, id), so
 * shared times are expected; the time never goes back, whatever the wall clock does.
 */
export class ReceiveClock {
  private lastMicros = 0;
  private current: string | null = null;

  /** The current write's time (ISO-8601 with microseconds, like the database's to_char(… 'US')). */
  now(): string {
    if (this.current) return this.current;
    const micros = Math.max(nowMicros(), this.lastMicros + 1);
    this.lastMicros = micros;
    this.current = isoMicros(micros);
    return this.current;
  }

  /** A write began: events appended from now on get a later time. */
  nextWrite(): void {
    this.current = null;
  }
}

function isoMicros(micros: number): string {
  const ms = Math.floor(micros / 1000);
  return `${new Date(ms).toISOString().slice(0, -1)}${String(micros - ms * 1000).padStart(3, '0')}Z`;
}

const nowMicros = () => Math.floor((performance.timeOrigin + performance.now()) * 1000);
