import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { API_METHODS, ipcChannel } from '../../src/shared/api-methods.js';
import { CONTENT_SECURITY_POLICY } from '../../src/main/security.js';
import * as electron from './fake-electron.js';

// src/main/index.ts itself, composed for real, with Electron played by fake-electron.ts: the
// window, the IPC handlers, the app:// protocol, the core on ports 0 with an in-memory PGlite,
// the tray, closing the window, a second launch and the quit.

vi.mock('electron', () => import('./fake-electron.js'));
const { state, app } = electron;

let userData: string;
beforeAll(async () => {
  userData = await mkdtemp(join(tmpdir(), 'switchboard-shell-'));
  state.paths = { userData, logs: join(userData, 'logs') };
  await mkdir(userData, { recursive: true });
  await writeFile(
    join(userData, 'config.json'),
    JSON.stringify({ receiver: { port: 0 }, control: { port: 0 }, database: { url: 'memory://' }, providers: [{ name: 'homelab', kind: 'open' }] }),
  );
  await import('../../src/main/index.js');
  app.becomeReady();
  // What the start-up screen's script would see, polled as it does.
  const poll = setInterval(() => {
    void state.protocolHandlers.get('app')?.(new Request('app://switchboard/startup/state')).then(async (response) => {
      const view = (await response.json()) as { state: string; step?: string | null; title?: string };
      const seen = view.state === 'starting' ? `${view.step}: ${view.title}` : view.state;
      if (startupViews.at(-1) !== seen) startupViews.push(seen);
    });
  }, 5);
  try {
    await vi.waitFor(() => expect(state.trays).toHaveLength(1), { timeout: 60_000, interval: 100 });
  } finally {
    clearInterval(poll);
  }
});
const startupViews: string[] = [];
afterAll(async () => {
  if (!state.exited) app.quit();
  await vi.waitFor(() => expect(state.exited).toBe(true), { timeout: 20_000 });
  await rm(userData, { recursive: true, force: true });
});

const trustedEvent = (window: electron.FakeBrowserWindow) => ({ sender: window.webContents, senderFrame: { url: window.webContents.url, parent: null } });

describe('the composed shell', () => {
  it('registers the app:// scheme as privileged before ready', () => {
    expect(state.privilegedSchemes).toEqual([{ scheme: 'app', privileges: expect.objectContaining({ standard: true, secure: true }) }]);
  });

  it('opens one secure window at once on the start-up screen, then switches it to the UI', () => {
    const [window] = state.windows;
    expect(window!.options.webPreferences).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false, webSecurity: true });
    expect(window!.options.webPreferences!.preload).toMatch(/preload[/\\]index\.cjs$/);
    expect(window!.loaded).toEqual(['app://switchboard/startup.html', 'app://switchboard/index.html']);
    expect(window!.visible).toBe(true);
    expect(window!.webContents.windowOpenHandler!({ url: 'https://example.com/' })).toEqual({ action: 'deny' });
  });

  it('showed the core’s start-up steps on the start-up screen, in order, then ready', () => {
    const order = ['null: Starting switchboard…', 'opening-database: Opening the database…', 'migrating: Updating the database…', 'starting-servers: Starting the receiver…', 'ready'];
    expect(startupViews).toContain('opening-database: Opening the database…'); // PGlite takes seconds to open
    expect(startupViews.at(-1)).toBe('ready');
    expect(startupViews.map((view) => order.indexOf(view))).toEqual([...startupViews.map((view) => order.indexOf(view))].sort());
  });

  it('serves the start-up screen under the same CSP as the UI, with no inline script and nothing remote', async () => {
    const response = await state.protocolHandlers.get('app')!(new Request('app://switchboard/startup.html'));
    expect(response.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    const html = await response.text();
    expect(html.match(/<script[^>]*>/g)).toEqual(['<script src="startup.js">']);
    expect(html).not.toMatch(/https?:\/\/|\son\w+=/i);
    // Once the UI is up its buttons do nothing: a retry or a quit from a page is only for the start-up screen.
    const retry = await state.protocolHandlers.get('app')!(new Request('app://switchboard/startup/retry', { method: 'POST', headers: { 'x-switchboard-startup': 'retry' } }));
    expect(retry.status).toBe(409);
  });

  it('registers one IPC handler per contract method, answering our page only', async () => {
    expect([...state.ipcHandlers.keys()].sort()).toEqual(API_METHODS.map(ipcChannel).sort());
    const [window] = state.windows;
    const info = (await state.ipcHandlers.get('switchboard:getServerInfo')!(trustedEvent(window!), {})) as { ok: boolean; value: { receiver_url: string } };
    expect(info.ok).toBe(true);
    const foreign = await state.ipcHandlers.get('switchboard:getServerInfo')!({ sender: window!.webContents, senderFrame: { url: 'https://evil.example/', parent: null } }, {});
    expect(foreign).toMatchObject({ ok: false, error: { code: 'forbidden' } });
  });

  it('serves the renderer on app:// with the CSP', async () => {
    const response = await state.protocolHandlers.get('app')!(new Request('app://switchboard/index.html'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
  });

  it('denies permissions through the session', () => {
    const answers: boolean[] = [];
    (state.permissionRequestHandler as (c: unknown, p: string, cb: (g: boolean) => void, d: { requestingUrl: string }) => void)({}, 'media', (granted) => answers.push(granted), {
      requestingUrl: 'app://switchboard/index.html',
    });
    expect(answers).toEqual([false]);
  });

  it('keeps receiving with the window closed, shows it in the tray, and pushes live events to a reopened window', async () => {
    const [first] = state.windows;
    first!.close();
    expect(state.exited).toBe(false);
    const info = (await state.ipcHandlers.get('switchboard:getServerInfo')!(trustedEvent(first!), {})) as { ok: boolean };
    expect(info.ok).toBe(false); // the closed window's frame may not call any more

    // Find the receiver through the tray's status line.
    const tray = state.trays[0]!;
    const receiver = /Receiving on (\S+)/.exec(tray.tooltip)![1]!;
    const delivered = await fetch(`${receiver}/webhooks/homelab`, { method: 'POST', body: '{"while":"closed"}', headers: { 'content-type': 'application/json' } });
    expect(delivered.status).toBe(200);
    await expect.poll(() => tray.tooltip, { timeout: 5000 }).toContain('1 event received since start');

    app.emit('second-instance', {}, ['switchboard'], '/');
    await expect.poll(() => state.windows.length).toBe(2);
    const second = state.windows[1]!;
    await fetch(`${receiver}/webhooks/homelab`, { method: 'POST', body: '{"while":"open"}', headers: { 'content-type': 'application/json' } });
    await expect.poll(() => second.webContents.sent.length, { timeout: 5000 }).toBeGreaterThan(0);
    expect(second.webContents.sent[0]).toMatchObject({ channel: 'switchboard:live', message: { type: 'event', event: { provider: 'homelab' } } });
  });

  it('quits from the tray only after the core has stopped', async () => {
    const tray = state.trays[0]!;
    const receiver = /Receiving on (\S+)/.exec(tray.tooltip)![1]!;
    const quit = (tray.menu as { template: { label?: string; click?: () => void }[] }).template.find((item) => item.label === 'Quit switchboard')!;
    quit.click!();
    expect(state.exited).toBe(false); // held until the core has stopped
    await expect.poll(() => state.exited, { timeout: 20_000 }).toBe(true);
    expect(tray.destroyed).toBe(true);
    await expect(fetch(`${receiver}/healthz`)).rejects.toThrow();
  });
});
