import type { NewEvent } from '../../src/core/new-event.js';

/** An event as the receiver would hand it to the store; tests override what they look at. */
export function newEvent(overrides: Partial<NewEvent> = {}): NewEvent {
  return {
    provider: 'homelab',
    family: 'webhook',
    event_type: 'ping',
    external_id: null,
    trust_mode: 'open',
    verified: false,
    verify_detail: null,
    content_type: 'application/json',
    headers: { 'content-type': 'application/json' },
    payload: Buffer.from('{"hello":"world"}'),
    source_ip: '127.0.0.1',
    ...overrides,
  };
}
