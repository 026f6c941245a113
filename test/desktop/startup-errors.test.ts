import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { damageDatabaseFiles } from '../helpers/database-worker-crash.js';
import { APP_TIMEOUT_MS, baseConfig, crashDatabaseWorker, desktopSuiteRuns, eventsScreen, finish, launchDesktop, newUserData, serverInfo, startupScreen, writeConfig, type DesktopApp } from './electron-app.js';

/**
 * What the real window shows when things go wrong, and Try again clicked on the real start-up
 * screen (its POST through the app:// protocol handler, under the real CSP): a config.json that
 * is not JSON, then a port another program holds, then — once the app is up — the database
 * worker crashing inside Electron's main process: once (a new worker takes over, the UI stays),
 * then with the database's files damaged (the window says the database stopped; Try again
 * after the repair brings the UI back with what arrived meanwhile).
 */

const run = desktopSuiteRuns();
const BROKEN = '{ "receiver": { "port": 0 }, "providers": [ ';

let desktop: DesktopApp;
let holder: Server;
let heldPort: number;

const failed = async (title: string) => {
  const { window } = desktop;
  await window.waitForURL(/^app:\/\/switchboard\/startup\.html/, { timeout: APP_TIMEOUT_MS });
  await window.locator('#failed-title', { hasText: title }).waitFor({ timeout: APP_TIMEOUT_MS });
  await window.getByRole('button', { name: 'Try again' }).waitFor();
  return startupScreen(window);
};
const tryAgain = () => desktop.window.getByRole('button', { name: 'Try again' }).click();
const deliver = (receiver: string, type: string) => fetch(`${receiver}/webhooks/homelab`, { method: 'POST', body: JSON.stringify({ type }), headers: { 'content-type': 'application/json' } });

describe.runIf(run)('the start-up screen and the database, in the real window', { timeout: 180_000 }, () => {
  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    heldPort = (holder.address() as { port: number }).port;
    desktop = await launchDesktop(await newUserData(BROKEN));
  });
  afterAll(async () => {
    await finish(desktop, 'startup-errors');
    holder?.close();
  });

  it('shows a config.json that is not JSON, with what to fix, and keeps the file', async () => {
    const screen = await failed('The configuration has a problem');
    expect(`${screen.message} ${screen.hint}`).toMatch(/JSON/);
    expect(screen.code).toBe('config_invalid');
    expect(await desktop.window.locator('#failed-config-path').textContent()).toContain('config.json');
  });

  it('then the port another program holds, after Try again', async () => {
    await writeConfig(desktop.userData, { ...baseConfig([{ name: 'homelab', kind: 'open' }]), receiver: { port: heldPort } });
    await tryAgain();
    const screen = await failed('A port switchboard needs is already in use');
    expect(screen.message).toContain(String(heldPort));
    expect(screen.code).toBe('port_in_use');
  });

  it('and starts once the port is free: Try again switches the same window to the UI', async () => {
    await new Promise<void>((resolve) => holder.close(() => resolve()));
    await tryAgain();
    await eventsScreen(desktop.window);
    expect((await serverInfo(desktop.window)).receiver_url).toBe(`http://127.0.0.1:${heldPort}`);
    expect(desktop.app.windows()).toHaveLength(1);
  });

  it('survives one crash of its database worker: a new one takes over and the UI stays live', async () => {
    const { window, app } = desktop;
    expect(await crashDatabaseWorker(app)).toBe(1);
    await expect.poll(() => desktop.output(), { timeout: APP_TIMEOUT_MS }).toContain('database: a new worker took over after the crash');
    expect(window.url()).toMatch(/^app:\/\/switchboard\/index\.html/);
    expect((await deliver(`http://127.0.0.1:${heldPort}`, 'after.crash')).status).toBe(200);
    await window.getByRole('option', { name: /homelab after\.crash/ }).waitFor({ timeout: 30_000 });
  });

  it('shows that the database stopped when a new worker cannot open it either, and Try again brings the UI back', async () => {
    const { app, userData } = desktop;
    const repair = await damageDatabaseFiles(userData);
    expect(await crashDatabaseWorker(app)).toBe(1);
    const screen = await failed('The database stopped');
    expect(screen.code).toBe('database_unavailable');
    expect(screen.hint).toContain('Try again restarts switchboard');
    expect((await deliver(`http://127.0.0.1:${heldPort}`, 'during.outage')).status).toBe(200);
    await repair();
    await tryAgain();
    await eventsScreen(desktop.window);
    await desktop.window.getByRole('option', { name: /homelab during\.outage/ }).waitFor({ timeout: 30_000 });
  });
});
