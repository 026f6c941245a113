import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSwitchboard, type TestSwitchboard } from '../helpers/core.js';
import { chromiumAvailable, launch, openPage, RENDERER_DIR, rendererBuilt } from './browser.js';

/** The first minute, in a real browser: send a test event from the empty state, see it as TEST, export it. */
const run = chromiumAvailable() && rendererBuilt();

let t: TestSwitchboard;
let browser: Browser;
let page: Page;
let problems: string[];

describe.runIf(run)('test events in the web UI', () => {
  beforeAll(async () => {
    [t, browser] = await Promise.all([
      startTestSwitchboard({ providers: [{ name: 'github', kind: 'github', secrets: [{ value: 'ui-test-events-secret' }] }] }, { rendererDir: RENDERER_DIR }),
      launch(),
    ]);
    ({ page, problems } = await openPage(browser));
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('sends a test event from the empty Events screen and lists it as TEST', async () => {
    await page.goto(t.sb.url.ui);
    await page.getByRole('heading', { name: 'No events yet' }).waitFor();
    await page.getByRole('button', { name: 'Send test event' }).click();
    const row = page.getByRole('listbox', { name: /Events/ }).getByRole('option').first();
    await row.waitFor();
    expect(await row.getAttribute('aria-label')).toMatch(/^test github push event \d+, signed$/);
    expect(await row.textContent()).toContain('TEST');
    await row.click();
    await page.getByRole('complementary').getByText('TEST', { exact: true }).waitFor();
  });

  it('sends a chosen test event from the Providers screen', async () => {
    await page.getByRole('link', { name: 'Providers' }).click();
    await page.getByLabel('Test event type for github').selectOption('issues.opened');
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText(/Sent: #\d+ issues\.opened \(verified\)/).waitFor();
  });

  it('exports the current filter as NDJSON', async () => {
    await page.getByRole('link', { name: 'Events' }).click();
    await page.getByLabel('Event type').fill('issues.opened');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export' }).click()]);
    const lines = (await readFile((await download.path())!, 'utf8')).trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((line) => [line.event_type, line.origin])).toEqual([['issues.opened', 'test']]);
    expect(problems).toEqual([]);
  });
});
