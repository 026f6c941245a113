import type { ExportedEvent } from '../../shared/export.js';
import type { EventRecord } from '../store/types.js';
import { toEventDetail } from '../wire.js';

/** A stored event as one NDJSON export line (without the newline). */
export function exportLine(record: EventRecord): string {
  return JSON.stringify(exportedEvent(record));
}

/** A stored event as the object of an export line (a suite file's case lines carry it too). */
export function exportedEvent(record: EventRecord): ExportedEvent {
  const detail = toEventDetail(record);
  const line: ExportedEvent = {
    id: detail.id,
    provider: detail.provider,
    family: detail.family,
    event_type: detail.event_type,
    external_id: detail.external_id,
    origin: detail.origin,
    trust_mode: detail.trust_mode,
    verified: detail.verified,
    payload_size: detail.payload_size,
    received_at: detail.received_at,
    verify_detail: detail.verify_detail,
    content_type: detail.content_type,
    source_ip: detail.source_ip,
    headers: detail.headers,
    payload: detail.payload,
    payload_encoding: detail.payload_encoding,
    payload_base64: Buffer.from(record.payload).toString('base64'),
  };
  return line;
}
