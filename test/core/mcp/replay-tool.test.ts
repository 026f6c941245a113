import { randomBytes } from 'node:crypto';
import { sign as githubSign, verify as githubVerify } from '@octokit/webhooks-methods';
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RESPONSE_BODY_BYTES_MCP } from '../../../src/core/mcp/tools/replay-webhook-event.js';
import { startTestSwitchboard, type TestSwitchboard } from '../../helpers/core.js';
import { newEvent } from '../../helpers/events.js';
import { connectMcp, type McpTestClient } from '../../helpers/mcp.js';
import { closedPort, startConsumer, type Consumer, type ReceivedRequest } from '../replay/consumer.js';

/**
 * replay_webhook_event as an agent uses it: replay to a real local handler, read what it
 * answered, edit and replay again. The handler checks signatures with the providers' own SDKs.
 */

const GITHUB_SECRET = 'gh-replay-tool-secret-0123456789';
const STRIPE_SECRET = 'whsec_replay_tool_0123456789abcdefghij';
const stripe = new Stripe('sk_test_unused');

let t: TestSwitchboard;
let handler: Consumer;
let agent: McpTestClient;
/** The MCP replay limit is a token bucket on switchboard's clock: each replay moves it 2 s on. */
let skewMs = 0;

/** A webhook handler as a developer writes one: verify, then validate, answer 400 with a reason. */
function webhookHandler(request: ReceivedRequest, res: import('node:http').ServerResponse): void {
  const answer = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'x-handler': 'shop' });
    res.end(JSON.stringify(body));
  };
  if (request.url === '/stripe') {
    let event: Stripe.Event;
    try {
      event = stripe.webhooks.constructEvent(request.body, request.headers['stripe-signature'] as string, STRIPE_SECRET);
    } catch (error) {
      answer(400, { error: `signature: ${(error as Error).message}` });
      return;
    }
    const amount = (event.data.object as { amount_total?: number }).amount_total ?? 0;
    if (amount <= 0) answer(400, { error: 'amount_total must be positive', field: 'amount_total', got: amount });
    else answer(200, { received: event.id, amount });
    return;
  }
  if (request.url === '/github') {
    void githubVerify(GITHUB_SECRET, request.body.toString('utf8'), String(request.headers['x-hub-signature-256'] ?? '')).then(
      (valid) => (valid ? answer(200, { ok: true }) : answer(401, { error: 'x-hub-signature-256 does not match' })),
      () => answer(401, { error: 'x-hub-signature-256 is malformed' }),
    );
    return;
  }
  if (request.url === '/leaky') {
    answer(500, { error: `debug: expected a signature made with ${GITHUB_SECRET}` });
    return;
  }
  answer(404, { error: 'no such route' });
}

beforeAll(async () => {
  handler = await startConsumer();
  handler.respond = webhookHandler;
  t = await startTestSwitchboard(
    {
      providers: [
        { name: 'github', kind: 'github', secrets: [{ env: 'GH_SECRET' }] },
        { name: 'stripe', kind: 'stripe', secrets: [{ env: 'STRIPE_SECRET' }] },
        { name: 'homelab', kind: 'open' },
      ],
    },
    { env: { GH_SECRET: GITHUB_SECRET, STRIPE_SECRET }, now: () => Date.now() + skewMs },
  );
  agent = await connectMcp(t);
});
afterAll(async () => {
  await agent?.close();
  await handler?.close();
  await t?.close();
});
afterEach(() => {
  handler.reset();
  handler.respond = webhookHandler;
});

async function replay(args: Record<string, unknown>) {
  skewMs += 2_000;
  return agent.call('replay_webhook_event', args);
}
async function replayOk(args: Record<string, unknown>): Promise<Record<string, any>> {
  const result = await replay(args);
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
  return result.structuredContent as Record<string, any>;
}
async function replayError(args: Record<string, unknown>, code: string): Promise<string> {
  const result = await replay(args);
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toMatchObject({ code });
  return (result.structuredContent as { message: string }).message;
}

function checkout(amount: number, id = `evt_${randomBytes(8).toString('hex')}`): string {
  return JSON.stringify({ id, object: 'event', type: 'checkout.session.completed', data: { object: { object: 'checkout.session', amount_total: amount } } });
}

async function deliverStripe(body: string): Promise<number> {
  const answer = await t.deliver('/webhooks/stripe', body, {
    'content-type': 'application/json; charset=utf-8',
    'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: body, secret: STRIPE_SECRET }),
  });
  expect(answer.status).toBe(200);
  return answer.json.id as number;
}

async function deliverGithub(body: string): Promise<number> {
  const answer = await t.deliver('/webhooks/github', body, {
    'content-type': 'application/json',
    'x-github-event': 'pull_request',
    'x-github-delivery': `d-${randomBytes(6).toString('hex')}`,
    'x-hub-signature-256': await githubSign(GITHUB_SECRET, body),
  });
  expect(answer.status).toBe(200);
  return answer.json.id as number;
}

describe('replay_webhook_event: what the handler answered', () => {
  it('gives the agent the handler’s 400 and its JSON reason, and get_webhook_event remembers it', async () => {
    const id = await deliverStripe(checkout(0));
    const result = await replayOk({ id, target_url: handler.url('/stripe') });
    expect(result).toEqual({
      id: expect.any(Number),
      target_url: handler.url('/stripe'),
      delivered: true,
      resigned: true,
      payload_edited: false,
      response_status: 400,
      response_ms: expect.any(Number),
      response_headers: expect.objectContaining({ 'content-type': 'application/json; charset=utf-8', 'x-handler': 'shop' }),
      response_body: JSON.stringify({ error: 'amount_total must be positive', field: 'amount_total', got: 0 }),
      response_body_encoding: 'utf8',
      response_body_truncated: false,
    });
    expect(JSON.parse(result.response_body).error).toBe('amount_total must be positive');

    const detail = await agent.ok('get_webhook_event', { id });
    expect(detail.replays[0]).toEqual({
      id: result.id,
      target_url: handler.url('/stripe'),
      requested_by: 'mcp',
      resigned: true,
      delivered: true,
      response_status: 400,
      response_ms: result.response_ms,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
    });
  });

  it('re-signs an edited payload over the new bytes: Stripe’s and GitHub’s own SDKs accept it at the handler', async () => {
    const id = await deliverStripe(checkout(0, 'evt_edit_me'));
    const edited = checkout(4200, 'evt_edit_me');
    const fixed = await replayOk({ id, target_url: handler.url('/stripe'), payload: edited, headers: { 'x-debug': 'agent' } });
    expect(fixed).toMatchObject({ delivered: true, resigned: true, payload_edited: true, response_status: 200 });
    expect(JSON.parse(fixed.response_body)).toEqual({ received: 'evt_edit_me', amount: 4200 });
    const sent = handler.requests.at(-1)!;
    expect(sent.body.toString()).toBe(edited);
    expect(sent.headers['x-debug']).toBe('agent');
    // The stored event is unchanged; the row says the payload was edited and which header was set.
    expect(Buffer.from((await t.sb.store.getEvent(id))!.payload).toString()).toBe(checkout(0, 'evt_edit_me'));
    expect((await t.sb.replays.history(id))[0]).toMatchObject({ payload_edited: true, headers_overridden: ['x-debug'], requested_by: 'mcp' });

    const pr = await deliverGithub('{"action":"opened","number":1}');
    const github = await replayOk({ id: pr, target_url: handler.url('/github'), payload: '{"action":"closed","number":1}' });
    expect(github).toMatchObject({ resigned: true, response_status: 200 });
    const received = handler.requests.at(-1)!;
    expect(received.body.toString()).toBe('{"action":"closed","number":1}');
    expect(await githubVerify(GITHUB_SECRET, received.body.toString(), received.headers['x-hub-signature-256'] as string)).toBe(true);
  });

  it('refuses a signature header while re-signing, and sends it as given with resign: false', async () => {
    const id = await deliverGithub('{"action":"own-signature"}');
    const forged = 'sha256=0000000000000000000000000000000000000000000000000000000000000000';
    const message = await replayError({ id, target_url: handler.url('/github'), headers: { 'X-Hub-Signature-256': forged } }, 'invalid_argument');
    expect(message).toMatch(/x-hub-signature-256.*re-signing computes.*resign: false/);
    expect(handler.connections).toBe(0);

    const own = await replayOk({ id, target_url: handler.url('/github'), resign: false, headers: { 'X-Hub-Signature-256': forged } });
    expect(own).toMatchObject({ delivered: true, resigned: false, response_status: 401 });
    expect(own.warning).toBeUndefined();
    expect(JSON.parse(own.response_body)).toEqual({ error: 'x-hub-signature-256 does not match' });
    expect(handler.requests.at(-1)!.headers['x-hub-signature-256']).toBe(forged);
  });

  it('says so when re-signing was asked for but is impossible (the provider was removed)', async () => {
    const { event } = await t.sb.store.insertEvent(
      newEvent({ provider: 'retired', trust_mode: 'signed', verified: true, verify_detail: 'github signature matched', payload: Buffer.from('{"old":true}') }),
    );
    const result = await replayOk({ id: event.id, target_url: handler.url('/github'), resign: true });
    expect(result).toMatchObject({ delivered: true, resigned: false, response_status: 401 });
    expect(result.warning).toMatch(/not re-signed: provider "retired" is no longer configured/);
    expect((await t.sb.replays.history(event.id))[0]!.warning).toBe(result.warning);
  });

  it('answers replay_failed when nothing answers, and the message says what happened', async () => {
    const id = await deliverGithub('{"action":"nobody-home"}');
    const port = await closedPort();
    const message = await replayError({ id, target_url: `http://127.0.0.1:${port}/github` }, 'replay_failed');
    const [row] = await t.sb.replays.history(id);
    expect(message).toBe(`replay ${row!.id} of event ${id} to http://127.0.0.1:${port}/github got no answer: ${row!.error} (it was re-signed)`);
    expect(message).toMatch(/connection refused by 127\.0\.0\.1:\d+: is the local consumer running\?/);
    expect((await agent.ok('get_webhook_event', { id })).replays[0]).toMatchObject({ id: row!.id, delivered: false, response_status: null });
  });

  it('never hands the agent a configured secret that a handler echoes in its answer', async () => {
    const id = await deliverGithub('{"action":"leak"}');
    const result = await replayOk({ id, target_url: handler.url('/leaky') });
    expect(result.response_body).toBe(JSON.stringify({ error: 'debug: expected a signature made with «redacted»' }));
  });
});

describe('replay_webhook_event: response bodies cut to 8 KiB', () => {
  const respondWith = (body: Buffer, contentType = 'text/plain; charset=utf-8') => {
    handler.respond = (_request, res) => {
      res.writeHead(500, { 'content-type': contentType });
      res.end(body);
    };
  };
  let id: number;
  beforeAll(async () => {
    const answer = await t.deliver('/webhooks/homelab', '{"cut":true}', { 'content-type': 'application/json' });
    id = answer.json.id;
  });

  it('keeps a body of exactly 8 KiB whole and cuts one byte more', async () => {
    respondWith(Buffer.alloc(MAX_RESPONSE_BODY_BYTES_MCP, 'a'));
    expect(await replayOk({ id, target_url: handler.url('/x') })).toMatchObject({
      response_body: 'a'.repeat(MAX_RESPONSE_BODY_BYTES_MCP),
      response_body_truncated: false,
    });
    respondWith(Buffer.alloc(MAX_RESPONSE_BODY_BYTES_MCP + 1, 'a'));
    expect(await replayOk({ id, target_url: handler.url('/x') })).toMatchObject({
      response_body: 'a'.repeat(MAX_RESPONSE_BODY_BYTES_MCP),
      response_body_truncated: true,
    });
  });

  it('cuts text on a character boundary, never inside a multibyte character', async () => {
    // "a" then 2-byte "é": byte 8192 is the second half of an "é".
    respondWith(Buffer.from(`a${'é'.repeat(5000)}`));
    const two = await replayOk({ id, target_url: handler.url('/x') });
    expect(two).toMatchObject({ response_body: `a${'é'.repeat(4095)}`, response_body_encoding: 'utf8', response_body_truncated: true });
    // A body over the stored 64 KiB, made of 3-byte "€": stored cut mid-character, still text.
    respondWith(Buffer.from('€'.repeat(30_000)));
    const three = await replayOk({ id, target_url: handler.url('/x') });
    expect(three).toMatchObject({ response_body: '€'.repeat(2730), response_body_encoding: 'utf8', response_body_truncated: true });
    expect(three.response_body).not.toContain('\uFFFD');
  });

  it('returns a binary body as base64 of exactly its first 8 KiB', async () => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00]), randomBytes(20_000)]);
    respondWith(bytes, 'application/octet-stream');
    const result = await replayOk({ id, target_url: handler.url('/x') });
    expect(result).toMatchObject({ response_body_encoding: 'base64', response_body_truncated: true });
    expect(Buffer.from(result.response_body, 'base64').equals(bytes.subarray(0, MAX_RESPONSE_BODY_BYTES_MCP))).toBe(true);
  });
});
