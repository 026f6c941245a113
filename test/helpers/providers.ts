import { expect } from 'vitest';
import type { Delivery } from '../../src/core/providers/verifier.js';
import type { TestSwitchboard } from './core.js';

/** A Delivery for calling a verifier directly (unit tests of clocks, headers, rotation). */
export function delivery(body: string | Buffer, headers: Record<string, string>, extra: Partial<Delivery> = {}): Delivery {
  const lower: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) lower[name.toLowerCase()] = value;
  return {
    rawBody: Buffer.isBuffer(body) ? body : Buffer.from(body),
    headers: lower,
    query: new URLSearchParams(),
    publicUrl: null,
    nowMs: Date.now(),
    ...extra,
  };
}

/**
 * Everything switchboard kept about one provider (events with their headers, rejections) and
 * its logs must not contain any of `leaks` (secrets and signature values).
 */
export async function expectNothingLeaked(t: TestSwitchboard, provider: string, leaks: readonly string[]): Promise<void> {
  const page = await t.sb.store.listEvents({ provider, limit: 200 });
  const events = await Promise.all(page.items.map((event) => t.sb.store.getEvent(event.id)));
  const rejections = await t.sb.store.listRejections({ provider, limit: 200 });
  const kept = JSON.stringify({ events: events.map((event) => ({ ...event, payload: undefined })), rejections: rejections.items });
  const logs = t.logger.lines.join('\n');
  expect(kept).toContain('«redacted»');
  for (const leak of leaks) {
    expect(kept, `stored rows contain ${leak}`).not.toContain(leak);
    expect(logs, `logs contain ${leak}`).not.toContain(leak);
  }
}
