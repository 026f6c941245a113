import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as electron from './fake-electron.js';

// src/main/index.ts given what a user gets wrong: a config.json that is not JSON at all (a
// half-saved edit), then a receiver port another program holds. Each time the start-up screen
// says what is wrong and how to fix it, keeps the file as it is, and Try again starts the app
// once the problem is gone, in the same window.

vi.mock('electron', () => import('./fake-electron.js'));
const { state, app } = electron;

const handle = (path: string, init?: RequestInit) => state.protocolHandlers.get('app')!(new Request(`app://switchboard/${path}`, init));
const view = async () => (await (await handle('startup/state')).json()) as Record<string, unknown>;
const press = (action: 'retry' | 'quit') => handle(`startup/${action}`, { method: 'POST', headers: { 'x-switchboard-startup': action } });
// A port in use is found only once the database is open (an in-memory PGlite: seconds, more on a busy machine).
const failedWith = (code: string) => vi.waitFor(async () => expect(await view()).toMatchObject({ state: 'failed', code }), { timeout: 100_000, interval: 50 });

const BROKEN = '{ "receiver": { "port": 0 }, "providers": [ { "name": "homelab", ';

let userData: string;
let holder: Server;
let heldPort: number;
const configPath = () => join(userData, 'config.json');

beforeAll(async () => {
  userData = await mkdtemp(join(tmpdir(), 'switchboard-shell-bad-input-'));
  state.paths = { userData, logs: join(userData, 'logs') };
  await writeFile(configPath(), BROKEN);
  holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  heldPort = (holder.address() as { port: number }).port;
  await import('../../src/main/index.js');
  app.becomeReady();
  await failedWith('config_invalid');
});
afterAll(async () => {
  if (!state.exited) app.quit();
  await vi.waitFor(() => expect(state.exited).toBe(true), { timeout: 20_000 });
  holder?.close();
  await rm(userData, { recursive: true, force: true });
});

describe('the start-up screen given bad input', { timeout: 120_000 }, () => {
  it('names a config.json that is not JSON, where the problem is and the file, and leaves the file alone', async () => {
    expect(await view()).toMatchObject({ title: 'The configuration has a problem', config_path: configPath(), message: expect.stringContaining(configPath()) });
    const { message, hint } = (await view()) as { message: string; hint: string | null };
    expect(`${message} ${hint}`).toMatch(/JSON/i);
    const { readFile } = await import('node:fs/promises');
    expect(await readFile(configPath(), 'utf8')).toBe(BROKEN);
    expect(state.windows).toHaveLength(1);
    expect(state.trays).toHaveLength(0);
  });

  it('names the port in use once the file is fixed, with the fix', async () => {
    await writeFile(configPath(), JSON.stringify({ receiver: { port: heldPort }, control: { port: 0 }, database: { url: 'memory://' }, providers: [{ name: 'homelab', kind: 'open' }] }));
    expect((await press('retry')).status).toBe(204);
    await failedWith('port_in_use');
    expect(await view()).toMatchObject({ title: 'A port switchboard needs is already in use', message: expect.stringContaining(String(heldPort)), hint: expect.stringMatching(/port/) });
    const page = await (await handle('startup.html')).text();
    expect(page).toContain(String(heldPort));
    expect(page).toContain('Try again');
  });

  it('starts once the port is free, and the same window switches to the UI', async () => {
    await new Promise<void>((resolve) => holder.close(() => resolve()));
    expect((await press('retry')).status).toBe(204);
    await vi.waitFor(() => expect(state.trays).toHaveLength(1), { timeout: 100_000, interval: 100 });
    expect(await view()).toEqual({ state: 'ready' });
    expect(state.trays[0]!.tooltip).toContain(`Receiving on http://127.0.0.1:${heldPort}`);
    expect(state.windows).toHaveLength(1);
    expect(state.windows[0]!.loaded.at(-1)).toBe('app://switchboard/index.html');
  });
});
