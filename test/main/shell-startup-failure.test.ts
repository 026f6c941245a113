import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as electron from './fake-electron.js';

// src/main/index.ts when the core cannot start (here: a bad config.json): the window shows the
// problem and the fix instead of an empty UI, and closing it quits (there is nothing to keep).

vi.mock('electron', () => import('./fake-electron.js'));
const { state, app } = electron;

let userData: string;
beforeAll(async () => {
  userData = await mkdtemp(join(tmpdir(), 'switchboard-shell-failure-'));
  state.paths = { userData, logs: join(userData, 'logs') };
  await writeFile(join(userData, 'config.json'), JSON.stringify({ receiver: { port: 'seven-seven' }, database: { url: 'memory://' } }));
  await import('../../src/main/index.js');
  app.becomeReady();
  await vi.waitFor(() => expect(state.windows[0]?.loaded).toContain('app://switchboard/startup-error.html'), { timeout: 30_000 });
});
afterAll(() => rm(userData, { recursive: true, force: true }));

describe('a failed start', () => {
  it('switches the window to the error page, which names the problem and where to fix it', async () => {
    const [window] = state.windows;
    expect(window!.loaded).toEqual(['app://switchboard/index.html', 'app://switchboard/startup-error.html']);
    const page = await state.protocolHandlers.get('app')!(new Request('app://switchboard/startup-error.html'));
    const html = await page.text();
    expect(html).toContain('The configuration has a problem');
    expect(html).toContain('receiver.port');
    expect(html).toContain(join(userData, 'config.json'));
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
  });

  it('answers API calls with the startup error instead of hanging', async () => {
    const [window] = state.windows;
    const result = await state.ipcHandlers.get('switchboard:listEvents')!({ sender: window!.webContents, senderFrame: { url: 'app://switchboard/index.html', parent: null } }, {});
    expect(result).toMatchObject({ ok: false, error: { code: 'config_invalid' } });
  });

  it('creates no tray and quits when the window is closed', async () => {
    expect(state.trays).toHaveLength(0);
    state.windows[0]!.close();
    await vi.waitFor(() => expect(state.exited).toBe(true));
  });
});
