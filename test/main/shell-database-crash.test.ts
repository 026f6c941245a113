import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CRASH_MESSAGE, crashDatabaseWorkers, damageDatabaseFiles } from '../helpers/database-worker-crash.js';
import * as electron from './fake-electron.js';

// src/main/index.ts with the real embedded database in its worker thread (an on-disk data dir,
// as the desktop app runs it), and that worker crashing for real (an uncaught error thrown in
// it through Node's inspector). A crash the core recovers from leaves the UI where it is; a
// database that cannot be started again turns the window into a screen saying so, with Try
// again, instead of a UI whose every call fails.

vi.mock('electron', () => import('./fake-electron.js'));
const { state, app } = electron;

const handle = (path: string, init?: RequestInit) => state.protocolHandlers.get('app')!(new Request(`app://switchboard/${path}`, init));
const view = async () => (await (await handle('startup/state')).json()) as Record<string, unknown>;
const press = (action: 'retry' | 'quit') => handle(`startup/${action}`, { method: 'POST', headers: { 'x-switchboard-startup': action } });
const window = () => state.windows.at(-1)!;
const trustedEvent = () => ({ sender: window().webContents, senderFrame: { url: window().webContents.url, parent: null } });
const call = async <T,>(method: string, input: unknown = {}) => {
  const result = (await state.ipcHandlers.get(`switchboard:${method}`)!(trustedEvent(), input)) as { ok: boolean; value: T; error?: unknown };
  if (!result.ok) throw new Error(`${method}: ${JSON.stringify(result.error)}`);
  return result.value;
};
const receiver = () => /Receiving on (\S+)/.exec(state.trays.at(-1)!.tooltip)![1]!;
const deliver = (body: string) => fetch(`${receiver()}/webhooks/homelab`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
const log = () => readFile(join(userData, 'logs', 'switchboard.log'), 'utf8');

let userData: string;
let repair: () => Promise<void>;
beforeAll(async () => {
  userData = await mkdtemp(join(tmpdir(), 'switchboard-shell-crash-'));
  state.paths = { userData, logs: join(userData, 'logs') };
  await writeFile(join(userData, 'config.json'), JSON.stringify({ receiver: { port: 0 }, control: { port: 0 }, providers: [{ name: 'homelab', kind: 'open' }] }));
  await import('../../src/main/index.js');
  app.becomeReady();
  await vi.waitFor(() => expect(state.trays).toHaveLength(1), { timeout: 100_000, interval: 100 });
});
afterAll(async () => {
  if (!state.exited) app.quit();
  await vi.waitFor(() => expect(state.exited).toBe(true), { timeout: 30_000 });
  await rm(userData, { recursive: true, force: true });
});

describe('the database worker crashing under the desktop app', { timeout: 120_000 }, () => {
  it('once: a new worker takes over, and the window stays on the UI, live', async () => {
    expect((await deliver('{"type":"before.crash"}')).status).toBe(200);
    expect(await crashDatabaseWorkers()).toBe(1);
    await vi.waitFor(async () => expect(await log()).toContain('database: a new worker took over after the crash'), { timeout: 30_000, interval: 100 });
    expect(await log()).toContain(`database: the database worker crashed: ${CRASH_MESSAGE}`);
    expect(await view()).toEqual({ state: 'ready' });
    expect(window().loaded).toEqual(['app://switchboard/startup.html', 'app://switchboard/index.html']);

    const sent = window().webContents.sent.length;
    expect((await deliver('{"type":"after.crash"}')).status).toBe(200);
    await vi.waitFor(() => expect(window().webContents.sent.length).toBeGreaterThan(sent), { timeout: 10_000 });
    const page = await call<{ events: { event_type: string }[] }>('listEvents', {});
    expect(page.events.map((event) => event.event_type)).toEqual(['after.crash', 'before.crash']);
  });

  it('for good: the window shows that the database stopped, with the fix, instead of a failing UI', async () => {
    repair = await damageDatabaseFiles(userData); // a new worker cannot open the database
    expect(await crashDatabaseWorkers()).toBe(1);
    await vi.waitFor(async () => expect((await view()).state).toBe('failed'), { timeout: 100_000, interval: 100 });
    expect(await view()).toMatchObject({
      title: 'The database stopped',
      code: 'database_unavailable',
      message: expect.stringContaining(`the database worker crashed: ${CRASH_MESSAGE}, and a new database worker could not be started`),
      hint: expect.stringContaining('Try again restarts switchboard'),
    });
    expect(window().loaded.at(-1)).toBe('app://switchboard/startup.html');
    expect(window().visible).toBe(true);
    // The page itself says it, before any script runs.
    expect(await (await handle('startup.html')).text()).toContain('The database stopped');
  });

  it('keeps receiving meanwhile, and Try again brings the UI back with those deliveries stored', async () => {
    expect((await deliver('{"type":"during.outage"}')).status).toBe(200);
    await repair();
    expect((await press('retry')).status).toBe(204);
    await vi.waitFor(() => expect(state.trays).toHaveLength(2), { timeout: 100_000, interval: 100 });
    expect(state.trays[0]!.destroyed).toBe(true);
    expect(await view()).toEqual({ state: 'ready' });
    expect(window().loaded.at(-1)).toBe('app://switchboard/index.html');
    expect(state.windows).toHaveLength(1);
    const page = await call<{ events: { event_type: string }[] }>('listEvents', {});
    expect(page.events.map((event) => event.event_type)).toEqual(['during.outage', 'after.crash', 'before.crash']);
  });
});
