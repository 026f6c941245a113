import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_TIMEOUT_MS, baseConfig, desktopSuiteRuns, eventsScreen, finish, launchAgain, launchDesktop, newUserData, within, type DesktopApp } from './electron-app.js';

/**
 * One switchboard per user (its data folder): a second launch hands over to the first — which
 * shows its window, opening a new one when it was closed to the tray — and exits without
 * starting a core of its own.
 */

const run = desktopSuiteRuns();
let desktop: DesktopApp;

describe.runIf(run)('a second launch', { timeout: 180_000 }, () => {
  beforeAll(async () => {
    desktop = await launchDesktop(await newUserData(baseConfig([{ name: 'homelab', kind: 'open' }])));
    await eventsScreen(desktop.window);
  });
  afterAll(() => finish(desktop, 'instances'));

  it('with the window closed: the first app opens its window on the UI, the second exits', async () => {
    const { app, window, userData } = desktop;
    const closed = window.waitForEvent('close', { timeout: APP_TIMEOUT_MS });
    await app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows()[0]!.close());
    await closed;
    const reopened = app.waitForEvent('window', { timeout: APP_TIMEOUT_MS });
    const second = launchAgain(userData);
    expect(await within(second.exited, APP_TIMEOUT_MS, 'the second launch exiting')).toBe(0);
    const page = await reopened;
    await eventsScreen(page);
    expect(await app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows().map((w) => w.isVisible()))).toEqual([true]);
    expect(second.output()).not.toMatch(/receiving on/);
  });

  it('with the window open: the same window stays, shown, and no other opens', async () => {
    const { app, userData } = desktop;
    const second = launchAgain(userData);
    expect(await within(second.exited, APP_TIMEOUT_MS, 'the second launch exiting')).toBe(0);
    expect(await app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows().map((w) => w.isVisible()))).toEqual([true]);
    expect(app.windows()).toHaveLength(1);
  });
});
