import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * Debian's Chromium driven by playwright-core, against a real switchboard serving the built
 * renderer (test/global-setup.ts builds out/renderer when sources changed). Without Chromium
 * the end-to-end tests skip loudly on a laptop and fail in CI, where `.ci/run` installs it.
 */

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const RENDERER_DIR = join(import.meta.dirname, '..', '..', 'out', 'renderer');

// STACK.md: what Chromium needs in a container without a GPU, a sandbox or the network.
const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM_PATH)) return true;
  if (process.env.CI) throw new Error(`end-to-end tests need Chromium at ${CHROMIUM_PATH} in CI (apt-get install -y chromium)`);
  process.stderr.write(`\n!!! SKIPPING end-to-end UI tests: no Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium) !!!\n\n`);
  return false;
}

export function rendererBuilt(): boolean {
  if (existsSync(join(RENDERER_DIR, 'index.html'))) return true;
  throw new Error(`the web UI is not built (${RENDERER_DIR}); run \`npx electron-vite build\``);
}

export async function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_FLAGS, headless: true });
}

/**
 * A page that records console errors and CSP violations, so a test can assert the UI ran
 * cleanly under the control port's strict CSP.
 */
export async function openPage(browser: Browser, options: { colorScheme?: 'light' | 'dark'; width?: number; height?: number } = {}): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1400, height: options.height ?? 900 },
    colorScheme: options.colorScheme ?? 'light',
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  // A string, not a function: this project type-checks without the DOM library.
  await page.addInitScript({
    content: "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));",
  });
  return { page, problems };
}
