import type { EventSummary } from '../../shared/events.js';
import type { JournalEvent } from '../new-event.js';

/** What `submit` resolves to: the event, whether it is a redelivery, and when reads can see it. */
export interface JournalInsert {
  event: EventSummary;
  duplicate: boolean;
  /** Resolves when the event is visible to reads (true), or was dropped by the database (false). */
  visible: Promise<boolean>;
}

export interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** One event on its way through the journal: allocated, written, then applied. */
export interface Entry {
  event: JournalEvent;
  summary: EventSummary;
  /** Its (provider, external_id) key; null when it has no external id. */
  key: string | null;
  /** What it counts against the journal's bound (MAX_LAG_BYTES). */
  bytes: number;
  /** The encoded record until it is written. */
  record: Buffer | null;
  ack: Deferred<JournalInsert>;
  visible: Deferred<boolean>;
}

export const keyOf = (provider: string, externalId: string | null) => (externalId === null ? null : `${provider}\u0000${externalId}`);

export function entryFor(event: JournalEvent): Entry {
  const summary: EventSummary = {
    id: event.id,
    provider: event.provider,
    family: event.family,
    event_type: event.event_type,
    external_id: event.external_id,
    origin: event.origin,
    trust_mode: event.trust_mode,
    verified: event.verified,
    payload_size: event.payload.byteLength,
    received_at: event.received_at,
    attempts: 1,
    drift: false, // not shaped yet (DESIGN §16): the tracker reads it once it is stored
  };
  const entry: Entry = {
    event,
    summary,
    key: keyOf(event.provider, event.external_id),
    bytes: event.payload.byteLength + 512,
    record: null,
    ack: deferred(),
    visible: deferred(),
  };
  entry.ack.promise.catch(() => {});
  return entry;
}
