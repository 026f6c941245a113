import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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

export interface Received {
  method: string;
  /** Path and query as requested. */
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * Replays a stored event through the real replay engine to a throwaway local consumer and
 * returns what the consumer received, so the provider's own library can judge it.
 */
export async function replayToConsumer(
  t: TestSwitchboard,
  eventId: number,
  path = '/hooks',
  options: { payload?: Buffer; resigned?: boolean } = {},
): Promise<Received & { target: string }> {
  let received: Received | undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      received = { method: req.method ?? '', url: req.url ?? '', headers, body: Buffer.concat(chunks) };
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  try {
    const record = await t.sb.replays.replay({ eventId, targetUrl: target, requestedBy: 'ui', ...(options.payload ? { payload: options.payload } : {}) });
    expect(record).toMatchObject({ delivered: true, response_status: 204, resigned: options.resigned ?? true });
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  if (!received) throw new Error('the consumer received nothing');
  return { ...received, target };
}
