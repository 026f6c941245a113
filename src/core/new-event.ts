import type { Family, Origin, TrustMode } from '../shared/events.js';

/**
 * An event as every door hands it on (receiver, queues, import) — before it has an id — and as
 * the journal and the store carry it once it has one. Its own module: the doors, the journal and
 * the store all name it, and none of them should have to import another for it.
 */
export interface NewEvent {
  provider: string;
  family: Family;
  event_type: string | null;
  external_id: string | null;
  trust_mode: TrustMode;
  verified: boolean;
  verify_detail: string | null;
  content_type: string | null;
  /** Already sanitized: the store never sees a secret-bearing header value. */
  headers: Record<string, string>;
  payload: Uint8Array;
  source_ip: string | null;
  /** Defaults to 'provider'. */
  origin?: Origin;
}

/** An event with the id and receive time it was acknowledged with (the journal gives both). */
export interface JournalEvent extends Omit<NewEvent, 'origin'> {
  id: number;
  /** ISO-8601 UTC with microseconds, as the database stores it. */
  received_at: string;
  origin: Origin;
}

/** An event as the journal is handed it: its id and (unless imported) its time are given there. */
export interface NewJournalEvent extends Omit<JournalEvent, 'id' | 'received_at'> {
  /** Kept when given (imports); otherwise the time of acknowledgement. */
  received_at?: string;
}
