import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInThisContext } from 'node:vm';
import { _electron, type ElectronApplication, type Page } from 'playwright-core';
import Stripe from 'stripe';
import { inject } from 'vitest';
import type { ServerInfo } from '../../src/shared/api.js';
import { CRASH_DATABASE_WORKERS_SOURCE } from '../helpers/database-worker-crash.js';

/**
 * The real desktop app, launched with Playwright's Electron support (playwright-core's
 * `_electron`, https://playwright.dev/docs/api/class-electron): the built app in out/ (the
 * suite's global setup builds it), its own `--user-data-dir` per launch (Electron takes an
 * absolute one as `userData`: config, database, secrets, single-instance lock), receiver and
 * control ports 0 (the test reads them through the app's own IPC API), a fixed control token.
 * Every wait is on something the app does — a window, a URL, a text, a process exit — never a
 * sleep.
 */

export const ROOT = join(import.meta.dirname, '..', '..');
/** Screenshots and logs the workflow keeps (.github/workflows/desktop.yml). */
export const ARTIFACTS = join(ROOT, 'test-results', 'desktop');
export const DESKTOP_TOKEN = 'desktop-suite-token-7f3a9c0e5b2d4816';
export const STRIPE_SECRET = 'whsec_desktop_suite_0123456789abcdef';
/** The machine is shared and CI runners are slow at first: wait generously for what must happen. */
export const APP_TIMEOUT_MS = 90_000;

/** Whether the suite runs here; where it cannot, the first desktop file to ask prints the one line saying why. */
export function desktopSuiteRuns(): boolean {
  const { skip, skipMarker } = inject('desktop');
  if (skip === null) return true;
  try {
    closeSync(openSync(skipMarker, 'wx'));
    process.stderr.write(
      `\n!!! SKIPPING the desktop window suite (test/desktop): ${skip}. It runs where Electron does: \`npm run test:desktop\`, and .github/workflows/desktop.yml on Linux, macOS and Windows !!!\n\n`,
    );
  } catch {
    // another desktop file of this run said it already
  }
  return false;
}

/** A fresh data folder for one launch, with this config.json when given. */
export async function newUserData(config?: unknown): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-desktop-'));
  if (config !== undefined) await writeConfig(dir, config);
  return dir;
}

export const writeConfig = (userData: string, config: unknown) => writeFile(join(userData, 'config.json'), typeof config === 'string' ? config : JSON.stringify(config, null, 2));

/** Ports 0 and an in-memory-free, on-disk database (the desktop's own, in its worker thread). */
export const baseConfig = (providers: unknown[] = []) => ({ receiver: { port: 0 }, control: { port: 0 }, providers });

export function appArgs(userData: string): string[] {
  // Playwright adds --no-sandbox itself on Linux; a process started by hand needs it too (CI
  // runners forbid the user namespaces Chromium's sandbox uses).
  return [ROOT, `--user-data-dir=${userData}`];
}

export function appEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && key !== 'ELECTRON_RUN_AS_NODE' && key !== 'NODE_OPTIONS') env[key] = value;
  return { ...env, SWITCHBOARD_TOKEN: DESKTOP_TOKEN, ...extra };
}

export interface DesktopApp {
  app: ElectronApplication;
  /** The app's first window (the start-up screen, then the UI). */
  window: Page;
  userData: string;
  /** What the main process printed (the log lines go to stderr too). */
  output(): string;
  /** Console errors, page errors and CSP violations seen in any window. */
  problems: string[];
  close(): Promise<void>;
}

const WATCH_CSP = "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));";

export async function launchDesktop(userData: string, env: Record<string, string> = {}): Promise<DesktopApp> {
  const { electronPath, fromEnv } = inject('desktop');
  const app = await _electron.launch({
    // Without executablePath Playwright launches the electron package's binary with its loader
    // (which holds `ready` until it is attached); ELECTRON_EXEC_PATH names another binary.
    ...(fromEnv && electronPath ? { executablePath: electronPath } : {}),
    args: appArgs(userData),
    env: appEnv(env),
    timeout: APP_TIMEOUT_MS,
  });
  let output = '';
  app.process().stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  app.process().stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const problems: string[] = [];
  await app.context().addInitScript({ content: WATCH_CSP });
  const watched = new WeakSet<Page>();
  const watch = (page: Page) => {
    if (watched.has(page)) return;
    watched.add(page);
    page.on('console', (message) => message.type() === 'error' && problems.push(`console: ${message.text()}`));
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  };
  app.on('window', watch);
  const window = await app.firstWindow({ timeout: APP_TIMEOUT_MS });
  watch(window);
  return {
    app,
    window,
    userData,
    output: () => output,
    problems,
    close: async () => {
      await app.close().catch(() => undefined);
    },
  };
}

/** Quits (if still running) and removes the data folder; keeps a screenshot of the window first. */
export async function finish(desktop: DesktopApp | undefined, name: string): Promise<void> {
  if (!desktop) return;
  await mkdir(ARTIFACTS, { recursive: true });
  const open = desktop.app.windows().at(-1);
  if (open) await open.screenshot({ path: join(ARTIFACTS, `${name}.png`) }).catch(() => undefined);
  await writeFile(join(ARTIFACTS, `${name}.log`), desktop.output()).catch(() => undefined);
  await desktop.close();
  await rm(desktop.userData, { recursive: true, force: true, maxRetries: 5 }).catch(() => undefined);
}

/** Waits for the UI's Events screen (after the start-up screen) in this window. */
export async function eventsScreen(window: Page): Promise<void> {
  await window.waitForURL(/^app:\/\/switchboard\/index\.html/, { timeout: APP_TIMEOUT_MS });
  await window.locator('a.nav-link[aria-current="page"]', { hasText: 'Events' }).waitFor({ timeout: APP_TIMEOUT_MS });
}

/** The running core's URLs, asked through the preload's API over IPC, as the UI asks. */
export async function serverInfo(window: Page): Promise<ServerInfo> {
  return (await window.evaluate('window.switchboard.getServerInfo({})')) as ServerInfo;
}

/** What the start-up screen shows (its texts, as the user reads them). */
export async function startupScreen(window: Page) {
  const text = (id: string) => window.locator(`#${id}`).textContent();
  return { title: await text('failed-title'), message: await text('failed-message'), hint: await text('failed-hint'), code: await text('failed-code') };
}

/** A Stripe delivery signed with Stripe's own SDK. */
export function stripeDelivery(receiverUrl: string, event: { id: string; type: string; data: unknown }, secret = STRIPE_SECRET, provider = 'stripe') {
  const payload = JSON.stringify({ object: 'event', api_version: '2024-06-20', created: Math.floor(Date.now() / 1000), ...event });
  const signature = new Stripe('sk_test_unused').webhooks.generateTestHeaderString({ payload, secret });
  return fetch(`${receiverUrl}/webhooks/${provider}`, { method: 'POST', body: payload, headers: { 'content-type': 'application/json', 'stripe-signature': signature } });
}

/** Crashes the app's database worker thread inside its main process (test/helpers/database-worker-crash.ts). */
export function crashDatabaseWorker(app: ElectronApplication): Promise<number> {
  // Playwright sends the function's source and calls it in the main process (with the electron module, unused).
  const crash = runInThisContext(`(${CRASH_DATABASE_WORKERS_SOURCE})`) as () => Promise<number>;
  return app.evaluate(crash);
}

/** The same app launched a second time, by hand (it is expected to hand over and exit). */
export function launchAgain(userData: string): { child: ChildProcess; exited: Promise<number | null>; output: () => string } {
  const { electronPath } = inject('desktop');
  if (!electronPath) throw new Error('no Electron binary');
  const args = [...(process.platform === 'linux' ? ['--no-sandbox'] : []), ...appArgs(userData)];
  const child = spawn(electronPath, args, { env: appEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

/** Resolves with the value, or rejects after `ms` naming what did not happen. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms / 1000} s`)), ms);
    }),
  ]);
}
