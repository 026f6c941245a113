import type { Entry, Header } from 'har-format';
import type { EventRecord } from '../store/types.js';
import { encodeBytes } from '../wire.js';

/**
 * HAR 1.2 (DESIGN §12): one entry per event — the request as it was delivered, with the
 * sanitized headers switchboard stored (secret-bearing values «redacted», never the originals).
 * The receiver's answer is not stored, so the response is a placeholder 200. Binary bodies are
 * base64 with `_encoding: "base64"` on postData, the convention HAR tools use for content.
 */

export function harPrologue(version: string): string {
  return `{"log":{"version":"1.2","creator":{"name":"switchboard","version":${JSON.stringify(version)}},"pages":[],"entries":[`;
}

export const HAR_EPILOGUE = ']}}\n';

/** Where the request was made: the receive URL, or the Redis channel / stream of a queue event. */
function requestUrl(record: EventRecord, receiverUrl: string): string {
  if (record.family === 'queue') {
    const where = record.headers['x-redis-channel'] ?? record.headers['x-redis-stream'] ?? '';
    return `redis://${record.provider}/${encodeURIComponent(where)}`;
  }
  return `${receiverUrl}/webhooks/${encodeURIComponent(record.provider)}`;
}

export function harEntry(record: EventRecord, receiverUrl: string): Entry {
  const headers: Header[] = Object.entries(record.headers).map(([name, value]) => ({ name, value }));
  const body = encodeBytes(record.payload);
  return {
    startedDateTime: record.received_at,
    time: 0,
    request: {
      method: record.family === 'queue' ? 'PUBLISH' : 'POST',
      url: requestUrl(record, receiverUrl),
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers,
      queryString: [],
      postData: {
        mimeType: record.content_type ?? 'application/octet-stream',
        text: body.text,
        ...(body.encoding === 'base64' ? { _encoding: 'base64' } : {}),
      } as Entry['request']['postData'],
      headersSize: -1,
      bodySize: record.payload_size,
      comment: `switchboard event ${record.id} (${record.origin}, ${record.trust_mode}${record.verified ? ', verified' : ''})`,
    },
    response: {
      status: 200,
      statusText: 'OK',
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: [],
      content: { size: 0, mimeType: 'application/json' },
      redirectURL: '',
      headersSize: -1,
      bodySize: -1,
      comment: 'the receiver’s answer is not stored',
    },
    cache: {},
    timings: { send: 0, wait: 0, receive: 0 },
    _switchboard: {
      id: record.id,
      provider: record.provider,
      event_type: record.event_type,
      external_id: record.external_id,
      origin: record.origin,
      trust_mode: record.trust_mode,
      verified: record.verified,
      verify_detail: record.verify_detail,
      source_ip: record.source_ip,
    },
  } as Entry;
}
