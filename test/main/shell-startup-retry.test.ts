import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as electron from './fake-electron.js';

// src/main/index.ts after a failed start: the user fixes config.json and presses "Try again" on
// the start-up screen; the same window then switches to the UI, without restarting the app.

vi.mock('electron', () => import('./fake-electron.js'));
const { state, app } = electron;

const handle = (path: string, init?: RequestInit) => state.protocolHandlers.get('app')!(new Request(`app://switchboard/${path}`, init));
const view = async () => (await (await handle('startup/state')).json()) as Record<string, unknown>;
const press = (action: 'retry' | 'quit') => handle(`startup/${action}`, { method: 'POST', headers: { 'x-switchboard-startup': action } });

let userData: string;
const configPath = () => join(userData, 'config.json');
beforeAll(async () => {
  userData = await mkdtemp(join(tmpdir(), 'switchboard-shell-retry-'));
  state.paths = { userData, logs: join(userData, 'logs') };
  await writeFile(configPath(), JSON.stringify({ receiver: { port: 'seven-seven' }, control: { port: 0 }, database: { url: 'memory://' } }));
  await import('../../src/main/index.js');
  app.becomeReady();
  await vi.waitFor(async () => expect((await view()).state).toBe('failed'), { timeout: 30_000, interval: 50 });
});
afterAll(async () => {
  if (!state.exited) app.quit();
  await vi.waitFor(() => expect(state.exited).toBe(true), { timeout: 20_000 });
  await rm(userData, { recursive: true, force: true });
});

describe('trying again after a failed start', () => {
  it('fails again, visibly, while the problem is still there', async () => {
    expect((await press('retry')).status).toBe(204);
    expect((await press('retry')).status).toBe(409); // a second click while it starts begins nothing
    await vi.waitFor(async () => expect(await view()).toMatchObject({ state: 'failed', code: 'config_invalid' }), { timeout: 30_000, interval: 50 });
  });

  it('starts the core once the config is fixed, and the same window switches to the UI', async () => {
    await writeFile(configPath(), JSON.stringify({ receiver: { port: 0 }, control: { port: 0 }, database: { url: 'memory://' } }));
    expect((await press('retry')).status).toBe(204);
    await vi.waitFor(() => expect(state.trays).toHaveLength(1), { timeout: 60_000, interval: 100 });
    expect(await view()).toEqual({ state: 'ready' });
    expect(state.windows).toHaveLength(1);
    expect(state.windows[0]!.loaded).toEqual(['app://switchboard/startup.html', 'app://switchboard/index.html']);
    const [window] = state.windows;
    const info = (await state.ipcHandlers.get('switchboard:getServerInfo')!({ sender: window!.webContents, senderFrame: { url: window!.webContents.url, parent: null } }, {})) as { ok: boolean };
    expect(info.ok).toBe(true);
    // Closing the window now keeps the core receiving.
    window!.close();
    expect(state.exited).toBe(false);
  });
});
