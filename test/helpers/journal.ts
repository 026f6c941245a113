import type { JournalEvent } from '../../src/core/new-event.js';

/** A journal record's event as a signed GitHub delivery makes it; tests override what they look at. */
export const journalEvent = (id: number, overrides: Partial<JournalEvent> = {}): JournalEvent => ({
  id,
  received_at: `2026-12-01T10:00:00.${String(id % 1_000_000).padStart(6, '0')}Z`,
  provider: 'github',
  family: 'webhook',
  event_type: 'ping',
  external_id: `delivery-${id}`,
  trust_mode: 'signed',
  verified: true,
  verify_detail: 'github: X-Hub-Signature-256 verified',
  content_type: 'application/json',
  headers: { 'x-github-delivery': `delivery-${id}` },
  source_ip: '127.0.0.1',
  origin: 'provider',
  payload: Buffer.from(JSON.stringify({ n: id })),
  ...overrides,
});
