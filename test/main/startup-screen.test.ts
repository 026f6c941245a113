import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppProtocolHandler } from '../../src/main/app-protocol.js';
import { CONTENT_SECURITY_POLICY } from '../../src/main/security.js';
import { createStartupScreen, startupPageHtml, type StartupScreen } from '../../src/main/startup-screen.js';
import { chromiumAvailable, launch, openPage } from '../e2e/browser.js';

/**
 * The desktop's start-up screen (src/main/startup-screen.ts) in Chromium, without Electron: the
 * shell's own app:// handler, with the real CSP, served over HTTP (Chromium has no app://
 * scheme of its own; the few lines below stand in for Electron's protocol.handle). The test
 * plays main: it reports the core's steps and a failure, and sees the page follow.
 */

const DATA_DIR = '/home/dev/.config/switchboard';
/** `SWITCHBOARD_SCREENSHOTS=1` also regenerates docs/screenshots/startup*.png (as test/e2e/screenshots.test.ts does for the UI). */
const shoot = async (page: Page, name: string) => {
  if (process.env.SWITCHBOARD_SCREENSHOTS === '1') await page.screenshot({ path: join(import.meta.dirname, '..', '..', 'docs', 'screenshots', `${name}.png`) });
};
const CONFIG_PATH = `${DATA_DIR}/config.json`;

/** Electron's `protocol.handle` for plain HTTP: the request is handed over as `app://switchboard/…`. */
function serveAppProtocol(handler: (request: Request) => Promise<Response>): Promise<{ server: Server; url: string }> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      void handler(new Request(`app://switchboard${req.url}`, { method: req.method, headers, body })).then(async (response) => {
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(Buffer.from(await response.arrayBuffer()));
      });
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

describe('the start-up screen routes', () => {
  const make = () => {
    const calls: string[] = [];
    const screen = createStartupScreen({ dataDir: DATA_DIR, configPath: CONFIG_PATH, retry: () => calls.push('retry'), quit: () => calls.push('quit') });
    const request = (path: string, init?: RequestInit) => screen.respond(new Request(`app://switchboard${path}`, init));
    const press = (action: string) => request(`/startup/${action}`, { method: 'POST', headers: { 'x-switchboard-startup': action } });
    return { screen, calls, request, press };
  };

  it('words each step of the core for the screen, the data dir named on a first start', () => {
    const { screen } = make();
    expect(screen.view()).toEqual({ state: 'starting', step: null, title: 'Starting switchboard…', detail: '' });
    screen.phase({ step: 'creating-database', message: `creating the database in ${DATA_DIR} — first start only, this takes a few seconds` });
    expect(screen.view()).toMatchObject({ title: `Creating the database in ${DATA_DIR} (first start only)…`, detail: '' });
    screen.phase({ step: 'opening-database', message: 'm' });
    expect(screen.view()).toMatchObject({ title: 'Opening the database…' });
    screen.phase({ step: 'migrating', message: 'migrating the database to the current schema (0004_journal)' });
    expect(screen.view()).toMatchObject({ title: 'Updating the database…', detail: 'migrating the database to the current schema (0004_journal)' });
    screen.phase({ step: 'starting-servers', message: 'm' });
    expect(screen.view()).toMatchObject({ title: 'Starting the receiver…' });
  });

  it('takes a retry only after a failure and a quit only before the UI is up, each only as a marked POST', () => {
    const { screen, calls, request, press } = make();
    expect(press('retry')).toMatchObject({ status: 409 });
    screen.failed({ code: 'port_in_use', message: 'port 7777 is in use' });
    expect(request('/startup/retry')).toMatchObject({ status: 405 });
    expect(request('/startup/retry', { method: 'POST' })).toMatchObject({ status: 405 });
    expect(request('/startup/retry', { method: 'POST', headers: { 'x-switchboard-startup': 'quit' } })).toMatchObject({ status: 405 });
    expect(request('/startup/retry', { method: 'OPTIONS' })).toMatchObject({ status: 405 }); // no CORS preflight ever passes
    expect(calls).toEqual([]);
    expect(press('retry')).toMatchObject({ status: 204 });
    expect(press('quit')).toMatchObject({ status: 204 });
    expect(calls).toEqual(['retry', 'quit']);
    screen.ready();
    expect(press('quit')).toMatchObject({ status: 409 });
    expect(request('/startup/other', { method: 'POST' })).toBeNull();
    expect(request('/index.html')).toBeNull();
  });

  it('escapes everything it shows; its one script is a file, never inline', () => {
    const { screen } = make();
    screen.failed({ code: 'config_invalid', message: 'providers[0].name: "<img src=x onerror=alert(1)>"', hint: 'fix & retry' });
    const html = startupPageHtml(screen.view());
    expect(html).not.toContain('<img');
    expect(html).toContain('&#60;img src=x onerror=alert(1)&#62;');
    expect(html).toContain('fix &#38; retry');
    expect(html.match(/<script[^>]*>/g)).toEqual(['<script src="startup.js">']);
    expect(html).not.toMatch(/<script[^>]*>[^<]/);
    expect(html).not.toMatch(/https?:\/\//);
  });
});

const run = chromiumAvailable();

describe.runIf(run)('the start-up screen in Chromium', () => {
  let browser: Browser;
  let page: Page;
  let problems: string[];
  let app: { server: Server; url: string };
  let screen: StartupScreen;
  const calls: string[] = [];

  beforeAll(async () => {
    screen = createStartupScreen({
      dataDir: DATA_DIR,
      configPath: CONFIG_PATH,
      // As src/main/index.ts does: a retry is a new start.
      retry: () => {
        calls.push('retry');
        screen.starting();
      },
      quit: () => calls.push('quit'),
    });
    app = await serveAppProtocol(createAppProtocolHandler({ rendererDir: '/nonexistent', contentSecurityPolicy: CONTENT_SECURITY_POLICY, startup: screen.respond }));
    browser = await launch();
    ({ page, problems } = await openPage(browser, { width: 900, height: 600 }));
    await page.goto(`${app.url}/startup.html`);
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => app?.server.close(resolve));
  });

  const title = () => page.locator('#starting-title').textContent();
  const poll = <T,>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 10_000 });

  it('says what the core is doing, step by step, as main reports it', async () => {
    await poll(title).toBe('Starting switchboard…');
    screen.phase({ step: 'creating-database', message: `creating the database in ${DATA_DIR} — first start only, this takes a few seconds` });
    await poll(title).toBe(`Creating the database in ${DATA_DIR} (first start only)…`);
    expect(await page.locator('#starting-detail').textContent()).toBe('');
    await shoot(page, 'startup');
    screen.phase({ step: 'migrating', message: 'migrating the database to the current schema (0001_init)' });
    await poll(title).toBe('Updating the database…');
    expect(await page.locator('#starting-detail').textContent()).toBe('migrating the database to the current schema (0001_init)');
    screen.phase({ step: 'opening-database', message: `opening the database in ${DATA_DIR}` });
    await poll(title).toBe('Opening the database…');
    screen.phase({ step: 'starting-servers', message: 'starting the receiver and the control server' });
    await poll(title).toBe('Starting the receiver…');
    expect(await page.getByRole('status').isVisible()).toBe(true);
    expect(await page.getByRole('alert').isVisible()).toBe(false);
  });

  it('shows a failure with its message, its hint, the code and the config file, and takes Try again', async () => {
    screen.failed({ code: 'port_in_use', message: 'port 7777 (receiver) is already in use', hint: 'stop the other program, or choose another port with "receiver.port" in config.json' });
    const alert = page.getByRole('alert');
    await poll(() => alert.isVisible()).toBe(true);
    expect(await page.getByRole('status').isVisible()).toBe(false);
    expect(await alert.getByRole('heading', { level: 1 }).textContent()).toBe('A port switchboard needs is already in use');
    expect(await page.locator('#failed-message').textContent()).toBe('port 7777 (receiver) is already in use');
    expect(await page.locator('#failed-hint').textContent()).toBe('stop the other program, or choose another port with "receiver.port" in config.json');
    expect(await page.locator('#failed-hint').isVisible()).toBe(true);
    expect(await page.locator('#failed-code').textContent()).toBe('port_in_use');
    expect(await page.locator('#failed-config-path').textContent()).toBe(CONFIG_PATH);
    expect(await page.title()).toBe('switchboard — A port switchboard needs is already in use');
    await shoot(page, 'startup-failed');

    await page.getByRole('button', { name: 'Try again' }).click();
    await poll(() => calls).toEqual(['retry']);
    await poll(() => page.getByRole('status').isVisible()).toBe(true);
    await poll(title).toBe('Starting switchboard…');
  });

  it('shows a failure without a hint without the "How to fix it" part, and takes Quit', async () => {
    screen.failed({ code: 'internal', message: 'switchboard failed to start: <b>boom</b>' });
    await poll(() => page.getByRole('alert').isVisible()).toBe(true);
    expect(await page.locator('#failed-message').textContent()).toBe('switchboard failed to start: <b>boom</b>');
    expect(await page.locator('#failed-message b').count()).toBe(0);
    expect(await page.getByText('How to fix it').isVisible()).toBe(false);
    expect(await page.locator('#failed-title').textContent()).toBe('switchboard could not start');
    await page.getByRole('button', { name: 'Quit' }).click();
    await poll(() => calls).toEqual(['retry', 'quit']);
  });

  it('shows the current state before any script runs (a window opened on a failed start), in dark mode too', async () => {
    screen.failed({ code: 'config_invalid', message: 'receiver.port: expected a number', hint: 'fix the file' });
    const context = await browser.newContext({ javaScriptEnabled: false, colorScheme: 'dark' });
    try {
      const bare = await context.newPage();
      await bare.goto(`${app.url}/startup.html`);
      expect(await bare.getByRole('alert').isVisible()).toBe(true);
      expect(await bare.locator('#failed-title').textContent()).toBe('The configuration has a problem');
      expect(await bare.locator('#failed-hint').textContent()).toBe('fix the file');
      expect(await bare.getByRole('status').isVisible()).toBe(false);
      // The dark colours win over the light ones (light text on a light box would be unreadable).
      expect(await bare.evaluate("getComputedStyle(document.getElementById('failed-message')).backgroundColor")).toBe('rgb(22, 27, 34)');
    } finally {
      await context.close();
    }
  });

  it('cannot be pressed from another origin: the marked POST needs a CORS preflight, which is refused', async () => {
    const other = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>elsewhere</title>'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const outsider = await browser.newPage();
    try {
      await outsider.goto(`http://127.0.0.1:${(other.address() as AddressInfo).port}/`);
      const outcome = await outsider.evaluate(
        `fetch(${JSON.stringify(`${app.url}/startup/quit`)}, { method: 'POST', headers: { 'x-switchboard-startup': 'quit' } }).then((r) => 'status ' + r.status, (e) => 'refused: ' + e.name)`,
      );
      expect(outcome).toBe('refused: TypeError');
      expect(calls).toEqual(['retry', 'quit']);
    } finally {
      await outsider.close();
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('ran under the app’s CSP without a single violation or error', async () => {
    const response = await page.request.get(`${app.url}/startup.html`);
    expect(response.headers()['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(problems).toEqual([]);
  });
});
