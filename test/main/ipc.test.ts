import type { IpcMain, IpcMainInvokeEvent, IpcRenderer, WebContents } from 'electron';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHandlers } from '../../src/core/api/handlers.js';
import { SwitchboardError } from '../../src/core/errors.js';
import { isAppUrl } from '../../src/main/app-protocol.js';
import { createIpcHandler, isTrustedSender, setupIpc, setupLive, type SenderPolicy } from '../../src/main/ipc.js';
import { createSwitchboardBridge, type IpcResult } from '../../src/preload/api.js';
import { API_METHODS, LIVE_CHANNEL, ipcChannel } from '../../src/shared/api-methods.js';
import { ApiErrorSchema, LiveMessageSchema, type SwitchboardApi } from '../../src/shared/api.js';
import { memoryLogger, startTestSwitchboard, type TestSwitchboard } from '../helpers/core.js';

// Electron cannot run here, so its two IPC ends are played by small fakes: an ipcMain that
// keeps handlers by channel, an ipcRenderer that calls them with the sender Electron would
// report, and structuredClone in between, as Electron's IPC does. Everything else is real: the
// main-side wrapper, the preload bridge, the API handlers and a switchboard with PGlite.

const APP_PAGE = 'app://switchboard/index.html';

interface FakeFrame {
  url: string;
  parent: FakeFrame | null;
}

/** What ipcMain.handle would see as event.sender / event.senderFrame. */
const eventFrom = (senderId: number, frame: FakeFrame | null) =>
  ({ sender: { id: senderId }, senderFrame: frame }) as unknown as IpcMainInvokeEvent;

/** Our window's web contents as main sees it (id 1), showing `url`. */
function windowContents(url = APP_PAGE) {
  const listeners = new Set<(event: unknown, message: unknown) => void>();
  let current = url;
  const contents = {
    id: 1,
    isDestroyed: () => false,
    getURL: () => current,
    send: (channel: string, message: unknown) => {
      if (channel === LIVE_CHANNEL) for (const listener of listeners) listener({ sender: 'ipcRenderer' }, structuredClone(message));
    },
  };
  return { contents: contents as unknown as WebContents, listeners, navigate: (next: string) => (current = next) };
}

function wire(api: SwitchboardApi | Promise<SwitchboardApi>, frame: FakeFrame | null = { url: APP_PAGE, parent: null }, senderId = 1) {
  const window = windowContents();
  const senders: SenderPolicy = { contents: () => window.contents, isAppUrl: (url) => isAppUrl(url) };
  const handlers = new Map<string, (event: IpcMainInvokeEvent, ...args: unknown[]) => Promise<unknown>>();
  const logger = memoryLogger();
  const ipcMain = {
    handle: (channel: string, handler: (event: IpcMainInvokeEvent, ...args: unknown[]) => Promise<unknown>) => handlers.set(channel, handler),
    removeHandler: (channel: string) => handlers.delete(channel),
  } as unknown as IpcMain;
  const remove = setupIpc(ipcMain, { api: () => api, senders, logger });
  const ipcRenderer = {
    invoke: async (channel: string, ...args: unknown[]) => {
      const handler = handlers.get(channel);
      if (!handler) throw new Error(`Error invoking remote method '${channel}': No handler registered`);
      return structuredClone(await handler(eventFrom(senderId, frame), ...structuredClone(args)));
    },
    on: (channel: string, listener: (event: unknown, message: unknown) => void) => {
      if (channel === LIVE_CHANNEL) window.listeners.add(listener);
    },
    removeListener: (channel: string, listener: (event: unknown, message: unknown) => void) => {
      if (channel === LIVE_CHANNEL) window.listeners.delete(listener);
    },
  } as unknown as IpcRenderer;
  return { bridge: createSwitchboardBridge(ipcRenderer), handlers, logger, senders, window, remove };
}

/** The renderer's view of a rejection: what createDesktopClient parses. */
async function rejection(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

let t: TestSwitchboard;
let api: SwitchboardApi;

beforeAll(async () => {
  t = await startTestSwitchboard({ providers: [{ name: 'homelab', kind: 'open' }] });
  api = createApiHandlers(t.sb);
});
afterAll(() => t?.close());

describe('isTrustedSender', () => {
  const window = windowContents();
  const policy: SenderPolicy = { contents: () => window.contents, isAppUrl: (url) => isAppUrl(url) };
  const top = { url: APP_PAGE, parent: null };

  it('accepts the top frame of our window showing our page', () => {
    expect(isTrustedSender(eventFrom(1, top), policy)).toBe(true);
  });

  it('rejects other web contents, iframes, foreign pages, vanished frames and a closed window', () => {
    expect(isTrustedSender(eventFrom(2, top), policy)).toBe(false);
    expect(isTrustedSender(eventFrom(1, { url: APP_PAGE, parent: top }), policy)).toBe(false);
    expect(isTrustedSender(eventFrom(1, { url: 'https://evil.example/', parent: null }), policy)).toBe(false);
    expect(isTrustedSender(eventFrom(1, { url: 'file:///tmp/x.html', parent: null }), policy)).toBe(false);
    expect(isTrustedSender(eventFrom(1, null), policy)).toBe(false);
    expect(isTrustedSender(eventFrom(1, top), { ...policy, contents: () => null })).toBe(false);
  });
});

describe('the IPC wrapper', () => {
  it('registers exactly one handler per contract method, and removes them again', () => {
    const { handlers, remove } = wire(api);
    expect([...handlers.keys()].sort()).toEqual(API_METHODS.map(ipcChannel).sort());
    remove();
    expect(handlers.size).toBe(0);
  });

  it('refuses a foreign sender before the core does anything', async () => {
    const delivered = await t.deliver('/webhooks/homelab', JSON.stringify({ keep: 'me' }), { 'content-type': 'application/json' });
    const foreign = wire(api, { url: 'https://evil.example/', parent: null });
    const iframe = wire(api, { url: APP_PAGE, parent: { url: APP_PAGE, parent: null } });
    const otherWindow = wire(api, { url: APP_PAGE, parent: null }, 7);
    for (const { bridge, logger } of [foreign, iframe, otherWindow]) {
      expect(await rejection(bridge.clearEvents({}))).toEqual({ code: 'forbidden', message: 'this frame may not call switchboard' });
      expect(logger.lines.some((line) => line.startsWith('warn ipc clearEvents: refused'))).toBe(true);
    }
    expect(await t.sb.store.getEvent(delivered.json.id)).not.toBeNull();
  });

  it('rejects malformed input with invalid_argument, naming the field', async () => {
    const { bridge } = wire(api);
    const wrongType = (await rejection(bridge.getEvent({ id: 'one' }))) as { code: string; message: string };
    expect(wrongType.code).toBe('invalid_argument');
    expect(wrongType.message).toMatch(/^getEvent: id: /);
    const extraKey = (await rejection(bridge.listEvents({ limit: 5, sql: 'drop table events' }))) as { code: string; message: string };
    expect(extraKey.code).toBe('invalid_argument');
    expect(extraKey.message).toContain('sql');
    const tooMany = (await rejection(bridge.listEvents({ limit: 100_000 }))) as { code: string };
    expect(tooMany.code).toBe('invalid_argument');
    expect(((await rejection(bridge.getEvent('7'))) as { code: string }).code).toBe('invalid_argument');
  });

  it('refuses extra arguments (the preload forwards exactly one, but a handler must not trust that)', async () => {
    const handler = createIpcHandler('listEvents', { api: () => api, senders: wire(api).senders, logger: memoryLogger() });
    expect(await handler(eventFrom(1, { url: APP_PAGE, parent: null }), {}, { smuggled: true })).toEqual({
      ok: false,
      error: { code: 'invalid_argument', message: 'listEvents: takes one input object, got 2 arguments' },
    });
  });

  it('answers through the bridge with the contract’s output, defaults filled in', async () => {
    const delivered = await t.deliver('/webhooks/homelab', JSON.stringify({ hello: 'ipc' }), { 'content-type': 'application/json' });
    const { bridge } = wire(api);
    const page = (await bridge.listEvents()) as { events: { id: number }[] };
    expect(page.events.map((event) => event.id)).toContain(delivered.json.id);
    const detail = (await bridge.getEvent({ id: delivered.json.id })) as { event: { payload: string; provider: string } };
    expect(detail.event).toMatchObject({ provider: 'homelab', payload: '{"hello":"ipc"}' });
  });

  it('maps a SwitchboardError to { code, message, hint? } that the renderer’s client can parse', async () => {
    const { bridge } = wire(api);
    const error = await rejection(bridge.getEvent({ id: 987_654_321 }));
    expect(error).not.toBeInstanceOf(Error); // plain data: an Error would lose code and hint crossing contextBridge
    const parsed = ApiErrorSchema.parse(error);
    expect(parsed.code).toBe('not_found');
    expect(parsed.message).toContain('987654321');
  });

  it('keeps the hint, and reports unexpected errors as internal without their message', async () => {
    const failing = {
      ...api,
      getSettings: async () => {
        throw new SwitchboardError('config_invalid', 'config.json: replay.timeout_ms: too big', { hint: 'fix the file' });
      },
      getServerInfo: async () => {
        throw new Error('ENOENT: /home/alice/.switchboard/secret-path');
      },
    } as SwitchboardApi;
    const { bridge, logger } = wire(failing);
    expect(await rejection(bridge.getSettings({}))).toEqual({ code: 'config_invalid', message: 'config.json: replay.timeout_ms: too big', hint: 'fix the file' });
    const internal = await rejection(bridge.getServerInfo({}));
    expect(internal).toEqual({ code: 'internal', message: 'internal error (see the switchboard log)' });
    expect(logger.lines.join('\n')).toContain('secret-path');
  });

  it('holds calls made while the core starts, and answers them once it is up', async () => {
    let ready!: (api: SwitchboardApi) => void;
    const { bridge } = wire(new Promise<SwitchboardApi>((resolve) => (ready = resolve)));
    let answered = false;
    const pending = bridge.listProviders({}).then((value) => ((answered = true), value));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(answered).toBe(false);
    ready(api);
    expect(await pending).toMatchObject({ providers: [{ config: { name: 'homelab' } }] });
  });

  it('answers calls with the startup error when the core failed to start', async () => {
    const failed = Promise.reject(new SwitchboardError('port_in_use', 'port 7777 is in use', { hint: 'use --port' }));
    failed.catch(() => undefined);
    const { bridge } = wire(failed);
    expect(await rejection(bridge.listEvents({}))).toEqual({ code: 'port_in_use', message: 'port 7777 is in use', hint: 'use --port' });
  });

  it('returns a result value on every path (never throws into Electron)', async () => {
    const handler = createIpcHandler('getEvent', { api: () => api, senders: wire(api).senders, logger: memoryLogger() });
    const results: IpcResult[] = await Promise.all([
      handler(eventFrom(9, null)),
      handler(eventFrom(1, { url: APP_PAGE, parent: null }), { id: -1 }),
      handler(eventFrom(1, { url: APP_PAGE, parent: null }), { id: 123_456_789 }),
    ]);
    expect(results.map((result) => (result.ok ? 'ok' : result.error.code))).toEqual(['forbidden', 'invalid_argument', 'not_found']);
  });
});

describe('live messages', () => {
  it('reach onLive as contract messages, without the IPC event object, until unsubscribed', async () => {
    const { bridge, senders } = wire(api);
    const stop = setupLive(t.sb, senders);
    const received: unknown[][] = [];
    const unsubscribe = bridge.onLive((...args: unknown[]) => received.push(args));
    try {
      const delivered = await t.deliver('/webhooks/homelab', '{"live":true}', { 'content-type': 'application/json' });
      await expect.poll(() => received.length).toBeGreaterThan(0);
      const [args] = received;
      expect(args).toHaveLength(1);
      const message = LiveMessageSchema.parse(args![0]);
      expect(message).toMatchObject({ type: 'event', event: { id: delivered.json.id, provider: 'homelab' } });

      unsubscribe();
      const before = received.length;
      await t.deliver('/webhooks/homelab', '{"live":false}', { 'content-type': 'application/json' });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(received.length).toBe(before);
    } finally {
      stop();
    }
  });

  it('are not sent while the window shows anything but our page', async () => {
    const { bridge, senders, window } = wire(api);
    const stop = setupLive(t.sb, senders);
    const received: unknown[] = [];
    bridge.onLive((message) => received.push(message));
    try {
      window.navigate('https://evil.example/');
      await t.deliver('/webhooks/homelab', '{"secret":"for our page only"}', { 'content-type': 'application/json' });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(received).toEqual([]);
    } finally {
      stop();
    }
  });
});
