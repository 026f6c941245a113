import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../src/main/security.js';
import * as electron from './fake-electron.js';

// src/main/index.ts when the core cannot start (here: a bad config.json): the start-up screen
// switches to the problem and the fix instead of an empty UI, and closing it quits (there is
// nothing to keep).

vi.mock('electron', () => import('./fake-electron.js'));
const { state, app } = electron;

const handle = (path: string, init?: RequestInit) => state.protocolHandlers.get('app')!(new Request(`app://switchboard/${path}`, init));
const view = async () => (await (await handle('startup/state')).json()) as Record<string, unknown>;

let userData: string;
beforeAll(async () => {
  userData = await mkdtemp(join(tmpdir(), 'switchboard-shell-failure-'));
  state.paths = { userData, logs: join(userData, 'logs') };
  await writeFile(join(userData, 'config.json'), JSON.stringify({ receiver: { port: 'seven-seven' }, database: { url: 'memory://' } }));
  await import('../../src/main/index.js');
  app.becomeReady();
  await vi.waitFor(async () => expect((await view()).state).toBe('failed'), { timeout: 30_000, interval: 50 });
});
afterAll(() => rm(userData, { recursive: true, force: true }));

describe('a failed start', () => {
  it('keeps the window on the start-up screen, which now names the problem, the fix and where to fix it', async () => {
    const [window] = state.windows;
    expect(window!.loaded).toEqual(['app://switchboard/startup.html']);
    expect(window!.visible).toBe(true);
    expect(await view()).toMatchObject({
      state: 'failed',
      title: 'The configuration has a problem',
      code: 'config_invalid',
      message: expect.stringContaining('receiver.port'),
      config_path: join(userData, 'config.json'),
    });
    // A window opened now (or reloaded) shows the failure straight away, before its script runs.
    const page = await handle('startup.html');
    const html = await page.text();
    expect(html).toContain('The configuration has a problem');
    expect(html).toContain('receiver.port');
    expect(html).toContain(join(userData, 'config.json'));
    expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
  });

  it('takes the buttons only as POSTs of our own page, marked with the action', async () => {
    expect((await handle('startup/quit')).status).toBe(405); // a GET (an <img src>, a link) does nothing
    expect((await handle('startup/quit', { method: 'POST' })).status).toBe(405); // a plain cross-origin form post
    expect((await handle('startup/quit', { method: 'POST', headers: { 'x-switchboard-startup': 'retry' } })).status).toBe(405);
    expect(state.exited).toBe(false);
  });

  it('creates no tray and quits when the window is closed', async () => {
    expect(state.trays).toHaveLength(0);
    state.windows[0]!.close();
    await vi.waitFor(() => expect(state.exited).toBe(true));
  });
});
