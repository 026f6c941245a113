import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_REPLAY_BURST } from '../../../src/core/mcp/setup.js';
import { startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../../helpers/core.js';

const STRIPE_SECRET = 'whsec_mcp_test_events_0123456789abcdef';

let t: TestSwitchboard;
const clients: Client[] = [];

beforeAll(async () => {
  t = await startTestSwitchboard({ providers: [{ name: 'stripe', kind: 'stripe', secrets: [{ value: STRIPE_SECRET }] }, { name: 'github', kind: 'github' }] });
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await t?.close();
});

async function connect(): Promise<Client> {
  const client = new Client({ name: 'switchboard-test-events', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', t.sb.url.control), { requestInit: { headers: { authorization: `Bearer ${TEST_TOKEN}` } } }));
  clients.push(client);
  return client;
}

describe('MCP send_test_event', () => {
  it('sends a signed test event that wait_for_webhook_event then returns', async () => {
    const client = await connect();
    const tools = await client.listTools();
    const tool = tools.tools.find((candidate) => candidate.name === 'send_test_event')!;
    expect(tool.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: true });

    const after = await t.sb.store.latestEventId();
    const sent = await client.callTool({ name: 'send_test_event', arguments: { provider: 'stripe', event_type: 'invoice.paid', overrides: { 'data.object.amount_paid': 4200 } } });
    expect(sent.isError).toBeFalsy();
    const event = (sent.structuredContent as { event: { id: number } }).event;
    expect(event).toMatchObject({ provider: 'stripe', event_type: 'invoice.paid', origin: 'test', trust_mode: 'signed', verified: true });

    const waited = await client.callTool({ name: 'wait_for_webhook_event', arguments: { provider: 'stripe', event_type: 'invoice.paid', after, timeout_s: 5 } });
    expect((waited.structuredContent as { event: unknown }).event).toEqual(event);
    const detail = await client.callTool({ name: 'get_webhook_event', arguments: { id: event.id } });
    expect(JSON.parse((detail.structuredContent as { payload: string }).payload).data.object.amount_paid).toBe(4200);
  });

  it('answers invalid_argument naming what exists, and never a secret', async () => {
    const client = await connect();
    const unknown = await client.callTool({ name: 'send_test_event', arguments: { provider: 'strpe' } });
    expect(unknown.isError).toBe(true);
    expect(unknown.structuredContent).toMatchObject({ code: 'invalid_argument', message: expect.stringContaining('configured: stripe, github') });
    const type = await client.callTool({ name: 'send_test_event', arguments: { provider: 'stripe', event_type: 'charge.nope' } });
    expect(type.structuredContent).toMatchObject({ code: 'invalid_argument', message: expect.stringContaining('checkout.session.completed, payment_intent.succeeded') });
    const noSecret = await client.callTool({ name: 'send_test_event', arguments: { provider: 'github' } });
    expect(noSecret.structuredContent).toMatchObject({ code: 'invalid_argument', message: expect.stringContaining('no usable secret') });
    expect(JSON.stringify([unknown, type, noSecret])).not.toContain(STRIPE_SECRET);
  });

  it('is rate-limited together with replays', async () => {
    const client = await connect();
    const results = [];
    for (let i = 0; i <= MCP_REPLAY_BURST; i++) results.push(await client.callTool({ name: 'send_test_event', arguments: { provider: 'stripe' } }));
    expect(results.slice(0, MCP_REPLAY_BURST).every((result) => !result.isError)).toBe(true);
    expect(results.at(-1)!.structuredContent).toMatchObject({ code: 'rate_limited' });
    const replay = await client.callTool({ name: 'replay_webhook_event', arguments: { id: 1, target_url: 'http://127.0.0.1:9/x' } });
    expect(replay.structuredContent).toMatchObject({ code: 'rate_limited' });
  });
});
