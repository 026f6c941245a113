import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { connectMcp, type McpTestClient } from '../../helpers/mcp.js';

// describe_event_type (DESIGN §6, §16): bounded to 300 fields, then fields_truncated; no example
// values (they come from payloads); list_webhook_events takes drift.

describe('describe_event_type', () => {
  let t: TestSwitchboard;
  let mcp: McpTestClient;

  beforeAll(async () => {
    t = await startTestSwitchboard({ providers: [{ name: 'hooks', kind: 'open' }] });
    mcp = await connectMcp(t);
  }, 60_000);
  afterAll(async () => {
    await mcp?.close();
    await t?.close();
  });

  const send = async (payload: unknown) => {
    const response = await t.deliver('/webhooks/hooks', JSON.stringify(payload), { 'content-type': 'application/json', 'x-event-type': 'wide' });
    expect(response.status).toBe(200);
    return response.json.id as number;
  };

  it('answers fields, drift and TypeScript, at most 300 fields, and list_webhook_events filters on drift', async () => {
    const wide: Record<string, string> = { type: 'wide' };
    for (let i = 0; i < 400; i++) wide[`field_${i}`] = `secret-looking value ${i}`;
    for (let i = 0; i < 21; i++) await send(wide);
    const drifted = await send({ ...wide, surprise: 1 });
    await t.sb.shapes.tracker.catchUp();
    const eventType = (await t.sb.store.getEvent(drifted))!.event_type!;

    const result = await mcp.ok('describe_event_type', { provider: 'hooks', event_type: eventType });
    expect(result).toMatchObject({ provider: 'hooks', event_type: eventType, events_seen: 22, fields_truncated: true });
    expect(result.fields).toHaveLength(300);
    expect(result.fields[0]).toEqual({ path: expect.any(String), types: ['string'], presence: 1 });
    expect(result.drift).toEqual([{ event_id: drifted, changes: [{ path: 'surprise', change: 'added' }] }]);
    expect(result.typescript).toContain('field_399');
    expect(JSON.stringify(result)).not.toContain('secret-looking value');

    const page = await mcp.ok('list_webhook_events', { provider: 'hooks', drift: true });
    expect(page.events.map((event: { id: number }) => event.id)).toEqual([drifted]);
    expect((await mcp.ok('get_webhook_event', { id: drifted, max_payload_bytes: 0 })).drift).toEqual([{ path: 'surprise', change: 'added', now: 'number' }]);
    expect(await mcp.error('describe_event_type', { provider: 'hooks', event_type: 'nope' }, 'not_found')).toMatch(/no shape for hooks nope yet/);
  }, 120_000);
});
