import { realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../src/main/security.js';
import { API_METHODS } from '../../src/shared/api-methods.js';
import type { ServerInfo } from '../../src/shared/api.js';
import { startConsumer, type Consumer } from '../core/replay/consumer.js';
import { APP_TIMEOUT_MS, baseConfig, DESKTOP_TOKEN, desktopSuiteRuns, eventsScreen, finish, launchDesktop, newUserData, serverInfo, STRIPE_SECRET, stripeDelivery, within, type DesktopApp } from './electron-app.js';

/**
 * The real desktop window (Electron, driven by Playwright): the start-up screen then the Events
 * screen, a Stripe delivery arriving live over IPC, a replay by click that Stripe's own SDK
 * verifies at a local consumer, a secret typed into the UI kept by safeStorage, the security
 * settings as the live window has them, and closing the window (the app goes on receiving)
 * until Quit. One app for the whole file, in order.
 */

const run = desktopSuiteRuns();
const UI_SECRET = 'whsec_typed_into_the_desktop_ui_5c1e';

let desktop: DesktopApp;
let info: ServerInfo;
let consumer: Consumer;
const requests: string[] = [];
const poll = <T,>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 30_000 });

describe.runIf(run)('the desktop window', { timeout: 180_000 }, () => {
  beforeAll(async () => {
    consumer = await startConsumer('127.0.0.1');
    const userData = await newUserData(baseConfig([{ name: 'stripe', kind: 'stripe', secrets: [{ value: STRIPE_SECRET }] }]));
    desktop = await launchDesktop(userData);
    desktop.window.on('request', (request) => requests.push(request.url()));
  });
  afterAll(async () => {
    await finish(desktop, 'window');
    await consumer?.close();
  });

  it('opens at once on the start-up screen, then shows the Events screen in the same window', async () => {
    const { window, app } = desktop;
    await eventsScreen(window);
    const history = await app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows().map((w) => w.webContents.navigationHistory.getAllEntries().map((entry) => entry.url)));
    expect(history).toHaveLength(1);
    expect(history[0]![0]).toBe('app://switchboard/startup.html');
    expect(history[0]!.at(-1)).toMatch(/^app:\/\/switchboard\/index\.html/);
    await poll(() => window.title()).toBe('Events · switchboard');
    info = await serverInfo(window);
    // The data folder is the --user-data-dir it was given (macOS may report /private/var for /var).
    expect(realpathSync(info.data_dir)).toBe(realpathSync(desktop.userData));
    expect(info.token).toBe(DESKTOP_TOKEN);
  });

  it('shows a Stripe delivery live, pushed over IPC (the page never speaks HTTP)', async () => {
    const delivered = await stripeDelivery(info.receiver_url, { id: 'evt_desktop_live_1', type: 'invoice.paid', data: { object: { id: 'in_desktop_1', amount_paid: 4200 } } });
    expect(delivered.status).toBe(200);
    await desktop.window.getByRole('option', { name: /stripe invoice\.paid event \d+/ }).waitFor({ timeout: 30_000 });
    expect(requests.filter((url) => !url.startsWith('app://switchboard/') && !url.startsWith('data:'))).toEqual([]);
  });

  it('replays it by click to a local consumer, re-signed so that Stripe’s own SDK verifies it', async () => {
    const { window } = desktop;
    await window.getByRole('option', { name: /stripe invoice\.paid/ }).click();
    const detail = window.getByRole('complementary', { name: /Event \d+/ });
    await detail.getByRole('tab', { name: /^Replay/ }).click();
    await detail.getByLabel('Target URL').fill(consumer.url('/webhooks/stripe'));
    const received = consumer.nextRequest(30_000);
    await detail.getByRole('button', { name: 'Send replay' }).click();
    const request = await received;
    const event = new Stripe('sk_test_unused').webhooks.constructEvent(request.body, String(request.headers['stripe-signature']), STRIPE_SECRET);
    expect(event.id).toBe('evt_desktop_live_1');
    const result = detail.getByRole('region', { name: 'Replay response' });
    await result.getByText(/Response\s*200\s*in/).waitFor({ timeout: 30_000 });
    expect(await result.getByText('Sent:').locator('..').textContent()).toMatch(/(?<!not )re-signed/);
  });

  it('keeps a secret typed into the UI with safeStorage: never in config.json, and it verifies deliveries', async () => {
    const { window, app, userData } = desktop;
    await window.getByRole('link', { name: 'Providers' }).click();
    await window.getByRole('button', { name: 'Add provider' }).click();
    const form = window.getByRole('region', { name: 'Add a provider' });
    await form.getByLabel('Name').fill('billing');
    await form.getByLabel('Kind').selectOption('stripe');
    // The UI knows it runs in the app: typed secrets go to the vault, not into config.json.
    await form.getByText('Typed values are kept in the app’s encrypted store.').waitFor();
    await form.getByLabel('Secret 1 source').selectOption('value');
    await form.getByLabel('Secret 1 value').fill(UI_SECRET);
    await form.getByRole('button', { name: 'Add provider' }).click();
    const card = window.getByRole('listitem').filter({ has: window.getByRole('heading', { name: 'billing' }) });
    await card.getByText('listening').waitFor({ timeout: 30_000 });

    const config = await readFile(join(userData, 'config.json'), 'utf8');
    const billing = (JSON.parse(config) as { providers: { name: string; secrets?: unknown[] }[] }).providers.find((provider) => provider.name === 'billing')!;
    expect(billing.secrets).toEqual([{ stored: expect.any(String) }]);
    expect(config).not.toContain(UI_SECRET);
    const vault = await readFile(join(userData, 'secrets.json'), 'utf8');
    expect(vault).not.toContain(UI_SECRET);
    expect(vault).not.toContain(Buffer.from(UI_SECRET).toString('base64'));
    // The file's entry is safeStorage's own ciphertext: the app's safeStorage opens it.
    const id = (billing.secrets![0] as { stored: string }).stored;
    const ciphertext = (JSON.parse(vault) as { secrets: Record<string, string> }).secrets[id]!;
    const opened = await app.evaluate(({ safeStorage }, base64) => safeStorage.decryptString(Buffer.from(base64, 'base64')), ciphertext);
    expect(opened).toBe(UI_SECRET);
    expect(await window.content()).not.toContain(UI_SECRET);

    const good = await stripeDelivery(info.receiver_url, { id: 'evt_desktop_billing_1', type: 'charge.succeeded', data: { object: { id: 'ch_1' } } }, UI_SECRET, 'billing');
    expect(good.status).toBe(200);
    const forged = await stripeDelivery(info.receiver_url, { id: 'evt_desktop_billing_2', type: 'charge.succeeded', data: { object: { id: 'ch_2' } } }, 'whsec_not_the_secret', 'billing');
    expect(forged.status).toBeGreaterThanOrEqual(400);
    await window.getByRole('link', { name: 'Events' }).click();
  });

  it('ran without console errors or CSP violations so far', () => {
    expect(desktop.problems).toEqual([]);
  });

  it('has the security settings it was built with, read back from the live window', async () => {
    const { window, app } = desktop;
    // nodeIntegration off: the page has no Node.
    expect(await window.evaluate('[typeof require, typeof process, typeof module, typeof Buffer]')).toEqual(['undefined', 'undefined', 'undefined', 'undefined']);
    // contextIsolation: the page sees exactly the preload's named API, nothing generic.
    expect(await window.evaluate('Object.keys(window.switchboard).sort()')).toEqual([...API_METHODS, 'onLive'].sort());
    // The preload's own world, asked directly: a separate world (contextIsolation) without the
    // API it exposes, and without a Node environment of its own (sandbox: a sandboxed preload
    // only gets require/process as its wrapper's arguments, never as globals).
    const cdp = await window.context().newCDPSession(window);
    const worlds: { id: number; name: string }[] = [];
    cdp.on('Runtime.executionContextCreated', ({ context }) => worlds.push({ id: context.id, name: context.name }));
    await cdp.send('Runtime.enable');
    const preloadWorld = worlds.find((world) => /Electron Isolated Context/i.test(world.name));
    expect(preloadWorld, `execution contexts: ${worlds.map((world) => world.name).join(', ')}`).toBeDefined();
    const { result } = await cdp.send('Runtime.evaluate', {
      contextId: preloadWorld!.id,
      returnByValue: true,
      expression: '({ process: typeof process, buffer: typeof Buffer, require: typeof require, bridge: typeof window.switchboard })',
    });
    expect(result.value).toEqual({ process: 'undefined', buffer: 'undefined', require: 'undefined', bridge: 'undefined' });
    await cdp.detach();
    // The OS-level sandbox of the renderer, where Electron reports it (macOS, Windows; on Linux
    // Playwright starts Electron with --no-sandbox, as CI runners forbid its user namespaces).
    const osSandboxed = await app.evaluate(({ app: electronApp, BrowserWindow }) => {
      const pid = BrowserWindow.getAllWindows()[0]!.webContents.getOSProcessId();
      return electronApp.getAppMetrics().find((metric) => metric.pid === pid)?.sandboxed ?? null;
    });
    if (process.platform !== 'linux') expect(osSandboxed).toBe(true);

    // The CSP on what app:// serves, and enforced: no inline script, no eval.
    expect(await window.evaluate("fetch(location.href.split('#')[0]).then((r) => r.headers.get('content-security-policy'))")).toBe(CONTENT_SECURITY_POLICY);
    const inline = await window.evaluate(
      "new Promise((resolve) => { document.addEventListener('securitypolicyviolation', (e) => resolve(e.violatedDirective + ' ' + String(window.__inlineRan)), { once: true }); const s = document.createElement('script'); s.textContent = 'window.__inlineRan = true'; document.head.append(s); })",
    );
    expect(inline).toMatch(/^script-src(-elem)? undefined$/);
    expect(await window.evaluate("(() => { try { return eval('1 + 1'); } catch (e) { return e.name; } })()")).toBe('EvalError');
  });

  it('blocks navigation away from the app and window.open: a plain link goes to the system browser, anything else nowhere', async () => {
    const { window, app } = desktop;
    await app.evaluate(({ BrowserWindow, shell }) => {
      const state = globalThis as unknown as { __navigations: Promise<string>; __opened: string[] };
      const contents = BrowserWindow.getAllWindows()[0]!.webContents;
      state.__navigations = new Promise((resolve) => contents.once('will-navigate', (_event, url) => resolve(url)));
      state.__opened = [];
      // The system browser, recorded instead of launched.
      shell.openExternal = async (url: string) => void state.__opened.push(url);
    });
    const away = consumer.url('/navigated-away');
    await window.evaluate(`location.href = ${JSON.stringify(away)}`);
    expect(await within(app.evaluate(() => (globalThis as unknown as { __navigations: Promise<string> }).__navigations), 30_000, 'will-navigate')).toBe(away);
    await window.getByRole('link', { name: 'Events' }).waitFor();
    expect(window.url()).toMatch(/^app:\/\/switchboard\/index\.html/);

    const popup = consumer.url('/popup');
    expect(await window.evaluate("window.open('file:///etc/hosts') === null")).toBe(true);
    expect(await window.evaluate(`window.open(${JSON.stringify(popup)}) === null`)).toBe(true);
    // Plain http(s) links go to the system browser instead (security.ts), the file: one nowhere:
    // in order, so once the popup's link got there the file: one had been dropped.
    await poll(() => app.evaluate(() => (globalThis as unknown as { __opened: string[] }).__opened)).toEqual([away, popup]);
    expect(await app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows().length)).toBe(1);
    expect(consumer.requests.map((request) => request.url)).not.toContain('/navigated-away');
    expect(consumer.requests.map((request) => request.url)).not.toContain('/popup');
  });

  it('keeps receiving with the window closed, until Quit', async () => {
    const { window, app } = desktop;
    const closed = window.waitForEvent('close', { timeout: APP_TIMEOUT_MS });
    await app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows()[0]!.close());
    await closed;
    expect(await app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows().length)).toBe(0);
    const delivered = await stripeDelivery(info.receiver_url, { id: 'evt_desktop_closed_1', type: 'invoice.created', data: { object: { id: 'in_2' } } });
    expect(delivered.status).toBe(200);
    expect((await fetch(`${info.receiver_url}/healthz`)).status).toBe(200);

    // Quit (the tray's Quit calls app.quit()): the core stops, then the process ends.
    const exited = app.waitForEvent('close', { timeout: APP_TIMEOUT_MS });
    await app.evaluate(({ app: electronApp }) => electronApp.quit()).catch(() => undefined);
    await exited;
    expect(app.process().exitCode).toBe(0);
    await expect(fetch(`${info.receiver_url}/healthz`)).rejects.toThrow();
    expect(desktop.output()).toMatch(/receiving on http:\/\/127\.0\.0\.1:\d+/);
  });
});
