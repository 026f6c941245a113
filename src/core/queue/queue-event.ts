import type { NewEvent } from '../new-event.js';

/**
 * Normalizing a Redis message or stream entry into an event row (DESIGN §8). A message is
 * untrusted bytes: nothing here throws on odd input, and text that reaches a text/jsonb column
 * loses its NUL characters (PostgreSQL refuses them, which would turn one odd message into an
 * insert that fails forever).
 */

export const STREAM_PAYLOAD_FIELDS = ['payload', 'data'] as const;

/** A field name and its raw value, in entry order (a stream entry may repeat a field). */
export type StreamFields = [name: string, value: Buffer][];

export function textSafe(text: string): string {
  return text.replace(/\u0000/g, '\uFFFD');
}

function parseJson(payload: Buffer): unknown {
  try {
    return JSON.parse(payload.toString('utf8'));
  } catch {
    return undefined;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function isUtf8(payload: Buffer): boolean {
  try {
    utf8.decode(payload);
    return true;
  } catch {
    return false;
  }
}

function typeFromJson(json: unknown, typeField: string): string | null {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return null;
  const value = (json as Record<string, unknown>)[typeField];
  if (typeof value === 'string' && value !== '') return textSafe(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return null;
}

function contentTypeOf(json: unknown, payload: Buffer): string {
  if (json !== undefined) return 'application/json';
  return isUtf8(payload) ? 'text/plain; charset=utf-8' : 'application/octet-stream';
}

type QueueEventBase = Pick<NewEvent, 'provider' | 'verify_detail' | 'headers'>;

function queueEvent(base: QueueEventBase, fields: Pick<NewEvent, 'event_type' | 'external_id' | 'content_type' | 'payload'>): NewEvent {
  return {
    ...base,
    ...fields,
    family: 'queue',
    trust_mode: 'queue',
    verified: false,
    source_ip: null,
  };
}

/** A pub/sub message: the payload is the message; its type comes from the JSON `type_field`. */
export function pubSubEvent(base: QueueEventBase, message: Buffer, typeField: string): NewEvent {
  const json = parseJson(message);
  return queueEvent(base, {
    event_type: typeFromJson(json, typeField),
    // Pub/sub messages carry no id: each one is its own event.
    external_id: null,
    content_type: contentTypeOf(json, message),
    payload: message,
  });
}

/**
 * A stream entry: the payload is its `payload` (else `data`) field, else the whole entry as a
 * JSON object. The type is the entry's `type_field` field, else that field of a JSON payload.
 * The entry id is the external id, so a redelivery dedupes to the event already stored.
 */
export function streamEvent(base: QueueEventBase, entryId: string, fields: StreamFields, typeField: string): NewEvent {
  const last = (name: string) => fields.findLast(([field]) => field === name)?.[1];
  const named = STREAM_PAYLOAD_FIELDS.map(last).find((value) => value !== undefined);
  const payload = named ?? Buffer.from(JSON.stringify(Object.fromEntries(fields.map(([name, value]) => [name, value.toString('utf8')]))));
  const json = parseJson(payload);
  const typeValue = last(typeField);
  return queueEvent(base, {
    event_type: typeValue !== undefined && typeValue.length > 0 ? textSafe(typeValue.toString('utf8')) : typeFromJson(json, typeField),
    external_id: entryId,
    content_type: contentTypeOf(json, payload),
    payload,
  });
}

export function safeHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [textSafe(name), textSafe(value)]));
}
