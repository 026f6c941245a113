// @vitest-environment jsdom
/// <reference types="node" />
import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../src/renderer/src/api/client';
import { App } from '../../src/renderer/src/app';
import { EventRow } from '../../src/renderer/src/screens/events-screen';
import type { EventSummary } from '../../src/shared/events';

/**
 * The Events screen in jsdom against a real switchboard: the view lives in the address, rows
 * carry their exact time and their failed-replay mark. (jsdom has no layout, so the virtualized
 * rows are rendered directly; Chromium covers the list end to end.)
 */

interface TestSwitchboard {
  sb: { url: { control: string } };
  deliver(path: string, body: string, headers?: Record<string, string>): Promise<{ json: { event_id?: number; id?: number } }>;
  close(): Promise<void>;
}
const CORE_HELPER = '../helpers/core';
const { startTestSwitchboard, TEST_TOKEN } = (await import(/* @vite-ignore */ CORE_HELPER)) as {
  startTestSwitchboard(config: unknown): Promise<TestSwitchboard>;
  TEST_TOKEN: string;
};

let t: TestSwitchboard;
let eventId: number;

beforeAll(async () => {
  t = await startTestSwitchboard({ providers: [{ name: 'homelab', kind: 'open' }, { name: 'lab2', kind: 'open' }] });
  await t.deliver('/webhooks/homelab', '{"type":"deploy.finished"}', { 'content-type': 'application/json' });
  const client = createHttpClient({ token: TEST_TOKEN, baseUrl: t.sb.url.control });
  eventId = (await client.listEvents({})).events[0]!.id;
});
afterAll(() => t?.close());
afterEach(cleanup);

const summary: EventSummary = {
  id: 7,
  provider: 'github',
  family: 'webhook',
  event_type: 'pull_request.opened',
  external_id: null,
  origin: 'provider',
  trust_mode: 'signed',
  verified: true,
  payload_size: 10,
  received_at: '2020-01-02T03:04:05.123456Z',
  attempts: 1,
  drift: false,
};

const row = (lastReplay: Parameters<typeof EventRow>[0]['lastReplay']) =>
  render(<EventRow event={summary} position={1} setSize={1} start={0} isCursor={false} isOpen={false} lastReplay={lastReplay} today="" onPick={() => undefined} />);

describe('an event row', () => {
  it('shows the date of an old event, and the exact stored time as its tooltip', () => {
    row(null);
    const time = screen.getByTitle('2020-01-02T03:04:05.123456Z');
    expect(time.textContent).toMatch(/^2020-01-0[12] \d\d:\d\d$/);
  });

  it('marks a failed last forward or replay, and only a failed one', () => {
    row({ delivered: false, response_status: null, requested_by: 'forward', created_at: '2020-01-02T03:04:06.000000Z' });
    expect(screen.getByRole('option').getAttribute('aria-label')).toMatch(/last forward failed$/);
    expect(screen.getByText(/✕ failed/).getAttribute('title')).toMatch(/The last forward \(forward, .*\) got no answer/);
    cleanup();
    row({ delivered: true, response_status: 503, requested_by: 'mcp', created_at: '2020-01-02T03:04:06.000000Z' });
    expect(screen.getByText('✕ 503').getAttribute('title')).toMatch(/The last replay \(mcp, .*\) answered 503/);
    cleanup();
    row({ delivered: true, response_status: 204, requested_by: 'ui', created_at: '2020-01-02T03:04:06.000000Z' });
    expect(screen.queryByText(/✕/)).toBeNull();
    expect(screen.getByRole('option').getAttribute('aria-label')).not.toMatch(/failed/);
  });
});

describe('the Events view in the address', () => {
  it('opens the filters and the event an address names, writes changes back, and follows a new address', async () => {
    window.history.replaceState(null, '', `/#/events?provider=homelab&type=deploy&event=${eventId}`);
    render(<App client={createHttpClient({ token: TEST_TOKEN, baseUrl: t.sb.url.control })} />);
    await screen.findByRole('option', { name: 'homelab' }, { timeout: 10_000 });
    expect((screen.getByLabelText('Provider') as HTMLSelectElement).value).toBe('homelab');
    expect((screen.getByLabelText('Event type') as HTMLInputElement).value).toBe('deploy');
    const detail = await screen.findByRole('complementary', { name: `Event ${eventId}` }, { timeout: 10_000 });
    await waitFor(() => expect(detail.querySelector('h2')?.textContent).toBe(`#${eventId} deploy.finished`));

    fireEvent.change(screen.getByLabelText('Trust'), { target: { value: 'open' } });
    await waitFor(() => expect(window.location.hash).toBe(`#/events?provider=homelab&type=deploy&trust=open&event=${eventId}`));
    fireEvent.change(screen.getByLabelText('Event type'), { target: { value: 'deploy.f' } });
    await waitFor(() => expect(window.location.hash).toContain('type=deploy.f&'));

    fireEvent.click(screen.getByRole('button', { name: 'Close event detail' }));
    await waitFor(() => expect(window.location.hash).toBe('#/events?provider=homelab&type=deploy.f&trust=open'));

    // Pasted or reached with Back: the screen follows the address.
    act(() => {
      window.history.replaceState(null, '', `/#/events?provider=lab2&search=needle&event=${eventId}`);
      window.dispatchEvent(new HashChangeEvent('hashchange'));
    });
    await waitFor(() => expect((screen.getByLabelText('Provider') as HTMLSelectElement).value).toBe('lab2'));
    expect((screen.getByLabelText('Event type') as HTMLInputElement).value).toBe('');
    expect((screen.getByLabelText('Search payloads') as HTMLInputElement).value).toBe('needle');
    await screen.findByRole('complementary', { name: `Event ${eventId}` });
  });
});
