import { sign } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scrubSecrets } from '../../../src/core/redact.js';
import { TEST_TOKEN, startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { connectMcp, type McpTestClient } from '../../helpers/mcp.js';
import { startConsumer, type Consumer } from './consumer.js';

/**
 * A handler that answers with the configured secret (#22.7): in each encoding, in a text or a
 * binary body, the secret must be gone before the API, MCP, the UI's getEvent and the `replays`
 * row see the answer. The consumer is a real HTTP server; the answers are read back through the
 * real faces.
 */

const SECRET = 'It/s a Secret+to Everybody? ünïcode';
const bytes = Buffer.from(SECRET, 'utf8');
const b64 = (prefix: number) => Buffer.concat([Buffer.from('xyz'.slice(0, prefix)), bytes, Buffer.from('tail')]).toString('base64');

/** Each form, as the handler writes it. */
const FORMS: Record<string, { body: Buffer; type: string }> = {
  raw: { body: Buffer.from(`{"echo":"${SECRET}"}`), type: 'application/json' },
  url: { body: Buffer.from(`secret=${encodeURIComponent(SECRET)}&ok=1`), type: 'application/x-www-form-urlencoded' },
  urlLower: { body: Buffer.from(`secret=${encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())}`), type: 'text/plain' },
  base64: { body: Buffer.from(`{"key":"${bytes.toString('base64')}"}`), type: 'application/json' },
  base64Offset1: { body: Buffer.from(`{"blob":"${b64(1)}"}`), type: 'application/json' },
  base64Offset2: { body: Buffer.from(`{"blob":"${b64(2)}"}`), type: 'application/json' },
  base64url: { body: Buffer.from(`token=${bytes.toString('base64url')}`), type: 'text/plain' },
  hex: { body: Buffer.from(`hex ${bytes.toString('hex')} HEX ${bytes.toString('hex').toUpperCase()}`), type: 'text/plain' },
  binary: { body: Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0x81]), bytes, Buffer.from([0x00, 0xc3])]), type: 'application/octet-stream' },
};

/** Every way the secret could still be read in what came back. */
function leaks(text: string): string[] {
  const found: string[] = [];
  const views = [text];
  try {
    views.push(Buffer.from(text, 'base64').toString('latin1'));
  } catch {
    /* not base64 */
  }
  const needles = [SECRET, bytes.toString('latin1'), encodeURIComponent(SECRET), encodeURIComponent(SECRET).toLowerCase(), bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex')];
  for (const view of views) for (const needle of needles) if (view.toLowerCase().includes(needle.toLowerCase())) found.push(needle);
  // Inside a longer base64 text, at any alignment.
  for (const run of text.match(/[A-Za-z0-9+/_-]{16,}={0,2}/g) ?? []) {
    for (let offset = 0; offset < 4; offset++) if (Buffer.from(run.slice(offset), 'base64').toString('latin1').includes(bytes.toString('latin1').slice(2, -2))) found.push(`base64 run +${offset}`);
  }
  return found;
}

let t: TestSwitchboard;
let consumer: Consumer;
let mcp: McpTestClient;
let eventId: number;

beforeAll(async () => {
  consumer = await startConsumer();
  t = await startTestSwitchboard({ providers: [{ name: 'gh', kind: 'github', secrets: [{ value: SECRET }] }] });
  mcp = await connectMcp(t);
  const body = JSON.stringify({ zen: 'answers' });
  const delivered = await t.deliver('/webhooks/gh', body, {
    'content-type': 'application/json',
    'x-github-event': 'push',
    'x-github-delivery': 'scrub-1',
    'x-hub-signature-256': await sign(SECRET, body),
  });
  expect(delivered.status).toBe(200);
  eventId = delivered.json.id;
});
afterAll(async () => {
  await mcp?.close();
  await t?.close();
  await consumer?.close();
});

const api = async (method: string, input: unknown) => {
  const response = await fetch(`${t.sb.url.control}/api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_TOKEN}` }, body: JSON.stringify(input) });
  expect(response.status).toBe(200);
  return (await response.json()) as any;
};

describe('a configured secret in a handler’s answer is scrubbed in every encoding', () => {
  it.each(Object.keys(FORMS))('%s: not in the API answer, the MCP answer, or the stored replays row', async (name) => {
    const form = FORMS[name]!;
    consumer.respond = (_request, res) => res.writeHead(200, { 'content-type': form.type }).end(form.body);
    expect(leaks(form.body.toString('latin1')).length + leaks(form.body.toString('base64')).length).toBeGreaterThan(0); // the oracle sees it

    const viaApi = await api('replayEvent', { id: eventId, target_url: consumer.url('/answers') });
    expect(viaApi.delivered).toBe(true);
    expect(leaks(viaApi.response_body)).toEqual([]);
    const shown = viaApi.response_body_encoding === 'base64' ? Buffer.from(viaApi.response_body, 'base64').toString('utf8') : viaApi.response_body;
    expect(shown).toContain('«redacted»');

    // MCP replays share a rate limit: wait for a token as an agent would.
    let viaMcp = await mcp.call('replay_webhook_event', { id: eventId, target_url: consumer.url('/answers') });
    while (viaMcp.isError && (viaMcp.structuredContent as { code?: string }).code === 'rate_limited') {
      await new Promise((resolve) => setTimeout(resolve, 500));
      viaMcp = await mcp.call('replay_webhook_event', { id: eventId, target_url: consumer.url('/answers') });
    }
    expect(viaMcp.isError).toBeFalsy();
    expect(leaks(String((viaMcp.structuredContent as { response_body: string }).response_body))).toEqual([]);
    expect(leaks(JSON.stringify(viaMcp.content))).toEqual([]);

    // What the UI and `show` read back later: the replays row.
    const detail = await api('getEvent', { id: eventId });
    const stored = await t.sb.store.listReplays(eventId);
    for (const row of stored) expect(leaks(Buffer.from(row.response_body ?? []).toString('latin1'))).toEqual([]);
    expect(leaks(JSON.stringify(detail))).toEqual([]);
  });

  it('the start of a secret at the end of an answer cut at the size cap is scrubbed too', () => {
    const cut = Buffer.concat([Buffer.from('answer: '), bytes.subarray(0, 12)]);
    expect(Buffer.from(scrubSecrets(cut, [SECRET])).toString('utf8')).toBe('answer: «redacted»');
    // Short secrets (< 8 characters) match by coincidence and are left alone; no secrets, nothing changes.
    const plain = Buffer.from('nothing to see');
    expect(scrubSecrets(plain, [SECRET])).toBe(plain);
    expect(scrubSecrets(plain, [])).toBe(plain);
  });
});
