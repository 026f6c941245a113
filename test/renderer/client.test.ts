// @vitest-environment jsdom
/// <reference types="node" />
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiRequestError, createDesktopClient, createHttpClient, takeToken, TOKEN_STORAGE_KEY, type LiveStatus } from '../../src/renderer/src/api/client';
import type { LiveMessage } from '../../src/shared/api';

/**
 * The core test helper is loaded by a path TypeScript does not follow: the renderer's
 * tsconfig must not type-check the core (it has no Node types). This is the part we use.
 */
interface TestSwitchboard {
  sb: { url: { control: string }; updateConfig(config: unknown): Promise<unknown> };
  deliver(path: string, body: string, headers?: Record<string, string>): Promise<unknown>;
  close(): Promise<void>;
}
const CORE_HELPER = '../helpers/core';
const { startTestSwitchboard, TEST_TOKEN } = (await import(/* @vite-ignore */ CORE_HELPER)) as {
  startTestSwitchboard(config: unknown): Promise<TestSwitchboard>;
  TEST_TOKEN: string;
};

describe('token from the URL fragment', () => {
  it('keeps the token and scrubs it from the address bar', () => {
    window.history.replaceState(null, '', '/#token=abc123&view=events');
    localStorage.clear();
    expect(takeToken(window.location, localStorage, window.history)).toBe('abc123');
    expect(localStorage.getItem(TOKEN_STORAGE_KEY)).toBe('abc123');
    expect(window.location.href).not.toContain('abc123');
    expect(window.location.hash).toBe('#view=events');
  });

  it('uses the stored token after a reload, and has none in a browser that never opened it', () => {
    window.history.replaceState(null, '', '/');
    expect(takeToken(window.location, localStorage, window.history)).toBe('abc123');
    localStorage.clear();
    expect(takeToken(window.location, localStorage, window.history)).toBeNull();
  });

  it('takes the token out of a view address and keeps the view', () => {
    window.history.replaceState(null, '', '/#/events?provider=github&token=fresh&event=42');
    expect(takeToken(window.location, localStorage, window.history)).toBe('fresh');
    expect(window.location.hash).toBe('#/events?provider=github&event=42');
    // A shared address without the token works with the stored one.
    expect(takeToken(window.location, localStorage, window.history)).toBe('fresh');
    expect(window.location.hash).toBe('#/events?provider=github&event=42');
  });

  it('lets a new fragment token replace the stored one', () => {
    localStorage.setItem(TOKEN_STORAGE_KEY, 'old');
    window.history.replaceState(null, '', '/settings#token=new');
    expect(takeToken(window.location, localStorage, window.history)).toBe('new');
    expect(window.location.pathname + window.location.hash).toBe('/settings');
  });
});

describe('HTTP client against a real switchboard', () => {
  let t: TestSwitchboard;
  beforeAll(async () => {
    t = await startTestSwitchboard({ providers: [{ name: 'homelab', kind: 'open' }] });
  });
  afterAll(() => t?.close());

  it('calls methods with the bearer token', async () => {
    const client = createHttpClient({ token: TEST_TOKEN, baseUrl: t.sb.url.control });
    const { providers } = await client.listProviders({});
    expect(providers.map((view) => view.status.name)).toEqual(['homelab']);
  });

  it('turns errors into ApiRequestError with code and hint', async () => {
    const client = createHttpClient({ token: TEST_TOKEN, baseUrl: t.sb.url.control });
    const notFound = await client.getEvent({ id: 123_456 }).catch((error: unknown) => error);
    expect(notFound).toBeInstanceOf(ApiRequestError);
    expect(notFound).toMatchObject({ code: 'not_found' });
    const clash = await client.addProvider({ provider: { name: 'homelab', kind: 'open' } }).catch((error: unknown) => error);
    expect(clash).toMatchObject({ code: 'invalid_argument', hint: expect.stringContaining('/webhooks/') });
    const anonymous = createHttpClient({ token: null, baseUrl: t.sb.url.control });
    expect(await anonymous.listEvents({}).catch((error: unknown) => error)).toMatchObject({ code: 'unauthorized', hint: expect.stringContaining('#token=') });
    const gone = createHttpClient({ token: TEST_TOKEN, baseUrl: 'http://127.0.0.1:9' });
    expect(await gone.listEvents({}).catch((error: unknown) => error)).toMatchObject({ code: 'unreachable' });
  });

  it('receives live messages over the streamed SSE and reports the stream open', async () => {
    const client = createHttpClient({ token: TEST_TOKEN, baseUrl: t.sb.url.control, backoffMs: [20] });
    const messages: LiveMessage[] = [];
    const statuses: LiveStatus[] = [];
    let stop = () => {};
    await new Promise<void>((resolve) => {
      stop = client.onLive(
        (message) => messages.push(message),
        (status) => {
          statuses.push(status);
          if (status === 'open') resolve();
        },
      );
    });
    try {
      await t.deliver('/webhooks/homelab', '{"hello":"live"}', { 'content-type': 'application/json' });
      await expect.poll(() => messages.find((m) => m.type === 'event')).toMatchObject({ type: 'event', event: { provider: 'homelab' } });
      await t.sb.updateConfig({ providers: [{ name: 'homelab', kind: 'open' }, { name: 'other', kind: 'open' }] });
      await expect.poll(() => messages.some((m) => m.type === 'config-changed')).toBe(true);
      expect(statuses).toEqual(['connecting', 'open']);
    } finally {
      stop();
    }
  });

  it('wraps the desktop bridge, turning its plain error objects into ApiRequestError', async () => {
    const http = createHttpClient({ token: TEST_TOKEN, baseUrl: t.sb.url.control });
    // The real preload rejects with { code, message, hint? }; here the HTTP client plays main.
    const bridge = Object.fromEntries(
      Object.entries(http)
        .filter(([, value]) => typeof value === 'function')
        .map(([name, call]) => [
          name,
          async (input: unknown) => {
            try {
              return await (call as (input: unknown) => Promise<unknown>)(input);
            } catch (error) {
              const { code, message } = error as ApiRequestError;
              throw { code, message };
            }
          },
        ]),
    ) as unknown as Parameters<typeof createDesktopClient>[0];
    bridge.onLive = () => () => undefined;
    const desktop = createDesktopClient(bridge);
    expect(desktop.transport).toBe('ipc');
    expect((await desktop.listProviders({})).providers).toHaveLength(2);
    expect(await desktop.getEvent({ id: 999 }).catch((error: unknown) => error)).toBeInstanceOf(ApiRequestError);
  });
});
