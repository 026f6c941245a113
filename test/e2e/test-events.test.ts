import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import Stripe from 'stripe';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSwitchboard, type TestSwitchboard } from '../helpers/core.js';
import { startConsumer, type Consumer } from '../core/replay/consumer.js';
import { chromiumAvailable, launch, openPage, RENDERER_DIR, rendererBuilt } from './browser.js';

const STRIPE_SECRET = 'whsec_e2e_resigned_curl_0123456789abcdef';

/** The first minute, in a real browser: send a test event from the empty state, see it as TEST, export it. */
const run = chromiumAvailable() && rendererBuilt();

let t: TestSwitchboard;
let browser: Browser;
let page: Page;
let problems: string[];
let consumer: Consumer;

describe.runIf(run)('test events in the web UI', () => {
  beforeAll(async () => {
    consumer = await startConsumer('127.0.0.1');
    [t, browser] = await Promise.all([
      startTestSwitchboard(
        {
          providers: [
            { name: 'github', kind: 'github', secrets: [{ value: 'ui-test-events-secret' }] },
            { name: 'stripe', kind: 'stripe', secrets: [{ value: STRIPE_SECRET }] },
          ],
          replay: { default_target: consumer.url('/stripe') },
        },
        { rendererDir: RENDERER_DIR },
      ),
      launch(),
    ]);
    ({ page, problems } = await openPage(browser));
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await consumer?.close();
  });

  it('sends a test event from the empty Events screen and lists it as TEST', async () => {
    await page.goto(t.sb.url.ui);
    await page.getByRole('heading', { name: 'No events yet' }).waitFor();
    await page.getByLabel('Test event provider').selectOption('github');
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
    // Test events are among a provider's details, which open on demand.
    await page.getByRole('button', { name: 'Details of github' }).click();
    await page.getByLabel('Test event type for github').selectOption('issues.opened');
    await page.getByRole('group', { name: 'Send a test event to github' }).getByRole('button', { name: 'Send test event' }).click();
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

  it('copies a re-signed cURL command that Stripe’s own library accepts when run in a shell', async () => {
    await page.getByLabel('Event type').fill('');
    const { event } = await t.sb.api.sendTestEvent({ provider: 'stripe', event_type: 'invoice.paid' });
    await page.getByRole('option', { name: new RegExp(`stripe invoice.paid event ${event.id}`) }).click();
    await page.getByRole('button', { name: 'Copy as cURL, re-signed with a fresh signature' }).click();
    await page.getByRole('button', { name: 'Copy as cURL, re-signed with a fresh signature' }).getByText('Copied').waitFor();
    const command = (await page.evaluate('navigator.clipboard.readText()')) as string;
    expect(command).toContain('--data-binary @-');
    const next = consumer.nextRequest();
    await new Promise<void>((resolve, reject) => execFile('sh', ['-c', `${command} --silent --output /dev/null`], (error) => (error ? reject(error) : resolve())));
    const received = await next;
    const parsed = new Stripe('sk_test_unused').webhooks.constructEvent(received.body, String(received.headers['stripe-signature']), STRIPE_SECRET);
    expect(parsed).toMatchObject({ type: 'invoice.paid' });
    expect(problems).toEqual([]);
  });
});
