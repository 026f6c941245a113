// @vitest-environment jsdom
/// <reference types="node" />
import { sign } from '@octokit/webhooks-methods';
import Stripe from 'stripe';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useState } from 'react';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient, type Client } from '../../src/renderer/src/api/client';
import { AppDataProvider } from '../../src/renderer/src/app-data';
import { ReplayPanel } from '../../src/renderer/src/screens/replay-panel';
import type { EventDetail, Replay } from '../../src/shared/events';

/**
 * The replay panel in jsdom against a real switchboard and a real consumer: what was sent, what
 * came back, who asked, and the marks on history rows.
 */

interface TestSwitchboard {
  sb: { url: { control: string } };
  deliver(path: string, body: string, headers?: Record<string, string>): Promise<{ status: number }>;
  close(): Promise<void>;
}
const CORE_HELPER = '../helpers/core';
const { startTestSwitchboard, TEST_TOKEN } = (await import(/* @vite-ignore */ CORE_HELPER)) as {
  startTestSwitchboard(config: unknown, options?: unknown): Promise<TestSwitchboard>;
  TEST_TOKEN: string;
};

const GITHUB_SECRET = 'replay-panel-github-secret';
const STRIPE_SECRET = 'whsec_replay_panel_0123456789abcdef';
const stripe = new Stripe('sk_test_replay_panel');
let target: string;
let t: TestSwitchboard;
let client: Client;
let consumer: Server;
const received: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  consumer = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push({ url: req.url ?? '', headers: req.headers, body });
      res.writeHead(201, { 'content-type': 'application/json', 'x-consumer': 'yes' }).end('{"stored":"ok-7731"}');
    });
  });
  await new Promise<void>((resolve) => consumer.listen(0, '127.0.0.1', resolve));
  target = `http://127.0.0.1:${(consumer.address() as AddressInfo).port}/hook`;
  t = await startTestSwitchboard(
    {
      providers: [
        { name: 'homelab', kind: 'open' },
        { name: 'github', kind: 'github', secrets: [{ env: 'GH' }] },
        { name: 'stripe', kind: 'stripe', secrets: [{ value: STRIPE_SECRET }], forward_to: [`${target}/stripe`] },
      ],
      replay: { default_target: target },
    },
    { env: { GH: GITHUB_SECRET } },
  );
  client = createHttpClient({ token: TEST_TOKEN, baseUrl: t.sb.url.control });
});
afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => consumer?.close(resolve));
});
afterEach(cleanup);

async function latest(provider: string): Promise<EventDetail> {
  const { events } = await client.listEvents({ provider, limit: 1 });
  return (await client.getEvent({ id: events[0]!.id })).event;
}

/** The panel as the detail pane holds it: its history grows with each replay. */
function Harness({ event, initial = [] }: { event: EventDetail; initial?: Replay[] }) {
  const [replays, setReplays] = useState<Replay[]>(initial);
  return <ReplayPanel event={event} replays={replays} onReplayed={(replay) => setReplays((list) => [replay, ...list])} pendingReplay={false} onReplayStarted={() => undefined} />;
}

const mount = (event: EventDetail, initial?: Replay[]) =>
  render(
    <AppDataProvider client={client}>
      <Harness event={event} {...(initial ? { initial } : {})} />
    </AppDataProvider>,
  );

describe('replay panel', () => {
  it('shows what was sent and what came back, and marks the history row', async () => {
    await t.deliver('/webhooks/homelab', '{"type":"deploy.finished"}', { 'content-type': 'application/json' });
    const event = await latest('homelab');
    mount(event);
    await waitFor(() => expect((screen.getByLabelText('Target URL') as HTMLInputElement).value).toMatch(/\/hook$/));
    fireEvent.click(screen.getByLabelText('Edit payload and headers'));
    fireEvent.change(screen.getByLabelText('Payload'), { target: { value: '{"edited":1}' } });
    fireEvent.change(screen.getByLabelText('Extra headers'), { target: { value: 'X-From-Test: yes' } });
    fireEvent.click(screen.getByRole('button', { name: 'Send replay' }));

    const result = await screen.findByRole('region', { name: 'Replay response' }, { timeout: 30_000 });
    expect(received.at(-1)).toMatchObject({ body: '{"edited":1}', headers: { 'x-from-test': 'yes' } });
    expect(result.textContent).toMatch(/Response 201 in \d+ ms/);
    expect(result.textContent).toContain('by ui');
    const sent = within(result).getByText('Sent:').parentElement!;
    expect(sent.textContent).toContain('not re-signed');
    expect(within(result).getByRole('table', { name: 'Response headers' }).textContent).toContain('x-consumer');
    expect(within(result).getByText(/ok-7731/)).toBeTruthy();

    const history = screen.getByRole('region', { name: 'History' });
    const item = within(history).getByRole('button');
    expect(item.textContent).toContain('201');
    expect(item.textContent).toContain('by ui');
  });

  it('marks history rows: re-signed or not, edited payload, headers set, a warning, who asked', async () => {
    const event = await latest('homelab');
    const stored = await client.replayEvent({ id: event.id });
    const forwarded: Replay = { ...stored, id: stored.id + 1000, requested_by: 'forward', payload_edited: false, headers_overridden: [], warning: 'the provider "gone" has no secret any more: sent unsigned' };
    const edited: Replay = {
      ...stored,
      id: stored.id + 1001,
      requested_by: 'mcp',
      resigned: true,
      payload_edited: true,
      headers_overridden: ['x-from-agent', 'x-trace'],
      request_headers: { 'content-type': 'application/json', 'x-from-agent': 'yes', 'x-trace': '1' },
      warning: null,
    };
    mount(event, [edited, forwarded]);
    const [first, second] = within(screen.getByRole('region', { name: 'History' })).getAllByRole('button');
    expect(first!.textContent).toMatch(/re-signed.*edited payload.*headers set: x-from-agent, x-trace.*by mcp/);
    expect(second!.textContent).toContain('by forward');
    expect(second!.textContent).toContain('⚠ warning');
    fireEvent.click(first!);
    let result = screen.getByRole('region', { name: 'Replay response' });
    expect(within(result).getByRole('table', { name: 'Request headers sent' }).textContent).toContain('x-trace');
    fireEvent.click(second!);
    result = screen.getByRole('region', { name: 'Replay response' });
    expect(within(result).getByRole('status').textContent).toBe('Warning: the provider "gone" has no secret any more: sent unsigned');
  });

  it("pre-fills the provider's own forward target (not the global default), says why, and sends there re-signed", async () => {
    const body = JSON.stringify({ id: 'evt_panel_target', object: 'event', type: 'invoice.paid', data: { object: {} } });
    await t.deliver('/webhooks/stripe', body, { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: body, secret: STRIPE_SECRET }) });
    mount(await latest('stripe'));
    await waitFor(() => expect((screen.getByLabelText('Target URL') as HTMLInputElement).value).toBe(`${target}/stripe`));
    expect(screen.getByText(/^Sends to/).textContent).toBe(`Sends to ${target}/stripe — the provider's forward target`);
    fireEvent.click(screen.getByRole('button', { name: 'Send replay' }));
    await screen.findByRole('region', { name: 'Replay response' }, { timeout: 30_000 });
    const sent = received.at(-1)!;
    expect(sent.url).toBe('/hook/stripe');
    expect(stripe.webhooks.constructEvent(sent.body, sent.headers['stripe-signature'] as string, STRIPE_SECRET).id).toBe('evt_panel_target');
  });

  it("without a forward rule, pre-fills the event's last target, then says a typed one is yours", async () => {
    const event = await latest('homelab');
    const earlier = await client.replayEvent({ id: event.id, target_url: `${target}/earlier` });
    mount(event, [earlier]);
    const field = screen.getByLabelText('Target URL') as HTMLInputElement;
    await waitFor(() => expect(field.value).toBe(`${target}/earlier`));
    expect(screen.getByText(/^Sends to/).textContent).toContain('— the last target this event was replayed to');
    fireEvent.change(field, { target: { value: `${target}/mine` } });
    expect(screen.getByText(/^Sends to/).textContent).toBe(`Sends to ${target}/mine — the target you gave`);
  });

  it('warns before re-signing an imported event: the handler would accept bytes switchboard never verified', async () => {
    const body = '{"action":"deleted","claimed":"verified"}';
    const line = {
      provider: 'github', family: 'webhook', event_type: 'repository', external_id: 'imported-panel-1', trust_mode: 'signed', verified: true,
      verify_detail: 'github: X-Hub-Signature-256 matched', received_at: '2026-11-30T09:41:07.123456Z', headers: { 'content-type': 'application/json' },
      payload_base64: Buffer.from(body).toString('base64'),
    };
    expect(await client.importEvents({ ndjson: JSON.stringify(line) })).toMatchObject({ imported: 1 });
    const { events } = await client.listEvents({ external_id: 'imported-panel-1' });
    const event = (await client.getEvent({ id: events[0]!.id })).event;
    expect(event.verified).toBe(false);
    mount(event);
    const resign = screen.getByLabelText(/Re-sign/) as HTMLInputElement;
    await waitFor(() => expect(resign.checked).toBe(true));
    const note = screen.getByRole('note');
    expect(note.textContent).toMatch(/Imported event, never verified here\..*file says it was signed.*accept them as github’s/);
    fireEvent.click(within(note).getByRole('button', { name: 'Turn re-sign off' }));
    expect(screen.queryByRole('note')).toBeNull();
  });

  it('says how to send your own signature: turn re-sign off', async () => {
    const body = '{"action":"opened"}';
    await t.deliver('/webhooks/github', body, {
      'content-type': 'application/json',
      'x-github-event': 'issues',
      'x-github-delivery': crypto.randomUUID(),
      'x-hub-signature-256': await sign(GITHUB_SECRET, body),
    });
    mount(await latest('github'));
    const resign = screen.getByLabelText(/Re-sign/) as HTMLInputElement;
    await waitFor(() => expect(resign.checked).toBe(true));
    fireEvent.click(screen.getByLabelText('Edit payload and headers'));
    expect(screen.getByText(/To send your own signature, turn Re-sign off/)).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Extra headers'), { target: { value: 'X-Hub-Signature-256: sha256=mine' } });
    const warning = screen.getByRole('alert');
    expect(warning.textContent).toMatch(/x-hub-signature-256 is a signature header, and Re-sign is on/);
    fireEvent.click(within(warning).getByRole('button', { name: 'Turn re-sign off' }));
    expect(resign.checked).toBe(false);
    expect(screen.queryByRole('alert')).toBeNull();
  });
});
