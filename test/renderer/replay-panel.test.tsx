// @vitest-environment jsdom
/// <reference types="node" />
import { sign } from '@octokit/webhooks-methods';
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
let t: TestSwitchboard;
let client: Client;
let consumer: Server;
const received: { headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  consumer = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(201, { 'content-type': 'application/json', 'x-consumer': 'yes' }).end('{"stored":"ok-7731"}');
    });
  });
  await new Promise<void>((resolve) => consumer.listen(0, '127.0.0.1', resolve));
  const target = `http://127.0.0.1:${(consumer.address() as AddressInfo).port}/hook`;
  t = await startTestSwitchboard(
    { providers: [{ name: 'homelab', kind: 'open' }, { name: 'github', kind: 'github', secrets: [{ env: 'GH' }] }], replay: { default_target: target } },
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
