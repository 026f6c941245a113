import { readFile } from 'node:fs/promises';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../helpers/core.js';
import { startHandler, STRIPE_SECRET, stripeDelivery, type Handler } from '../core/suites/handler.js';
import { chromiumAvailable, launch, openPage, RENDERER_DIR, rendererBuilt } from './browser.js';

/**
 * The Suites screen and "Save as suite…" end to end (DESIGN §14): Chromium against a real
 * switchboard, and a real handler that checks Stripe's signature with Stripe's library. The
 * screenshots land in $TMPDIR/switchboard-suites-screens/ (1280 and 900 px wide) to be looked at.
 */

const run = chromiumAvailable() && rendererBuilt();
const SHOTS = join(tmpdir(), 'switchboard-suites-screens');

let t: TestSwitchboard;
let browser: Browser;
let page: Page;
let problems: string[];
let handler: Handler;

const poll = <T,>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 20_000 });

describe.runIf(run)('Suites screen', () => {
  beforeAll(async () => {
    [t, browser, handler] = await Promise.all([
      startTestSwitchboard({ providers: [{ name: 'stripe', kind: 'stripe', secrets: [{ env: 'STRIPE_SECRET' }] }] }, { rendererDir: RENDERER_DIR, env: { STRIPE_SECRET } }),
      launch(),
      startHandler(),
    ]);
    for (const [type, amount] of [['checkout.session.completed', 12900], ['invoice.paid', 2500], ['charge.refunded', 700]] as const) {
      const { body, headers } = stripeDelivery(type, amount);
      expect((await t.deliver('/webhooks/stripe', body, headers)).status).toBe(200);
    }
    mkdirSync(SHOTS, { recursive: true });
    ({ page, problems } = await openPage(browser, { width: 1280, height: 860 }));
    await page.goto(`${t.sb.url.control}/#token=${TEST_TOKEN}`);
  });
  afterAll(async () => {
    await browser?.close();
    await handler?.close();
    await t?.close();
  });

  it('saves the selected events as a suite from the Events screen', async () => {
    const rows = page.getByRole('listbox', { name: /Events/ }).getByRole('option');
    await poll(() => rows.count()).toBe(3);
    await rows.nth(0).click({ modifiers: ['Control'] });
    await rows.nth(2).click({ modifiers: ['Control'] });
    await expect.poll(() => page.getByText('2 selected').count()).toBe(1);
    await expect.poll(() => rows.nth(0).getAttribute('aria-label')).toMatch(/, selected$/);
    await page.getByRole('button', { name: 'Save as suite…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Save as suite' });
    await dialog.getByLabel('Suite name').fill('checkout');
    await expect.poll(() => dialog.getByLabel(/The 2 selected events/).isChecked()).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'suites-save-1280.png') });
    await dialog.getByRole('button', { name: 'Save suite' }).click();
    await poll(() => dialog.getByRole('status').textContent()).toMatch(/Saved suite checkout: 2 cases/);
    const { cases } = await t.sb.api.getSuite({ name: 'checkout' });
    // oldest first: the list is newest first, so its first and third rows are events 3 and 1
    expect(cases.map((c) => c.event_type)).toEqual(['checkout.session.completed', 'charge.refunded']);
    await dialog.getByRole('button', { name: 'Open it in Suites' }).click();
    await poll(() => page.title()).toBe('Suites · switchboard');
  });

  it('runs it (progress while it runs), shows the cases, a regression’s differences side by side, and accepts', async () => {
    const list = page.getByRole('navigation', { name: 'Suites' });
    await poll(() => list.getByRole('button').first().textContent()).toMatch(/checkout\s*2 cases\s*never run/);
    await page.getByLabel('Target URL').fill(handler.url('/stripe'));
    handler.behaviour.delayMs = 400;
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const progress = page.getByRole('status').filter({ hasText: /of 2 cases/ });
    await poll(() => progress.count()).toBe(1);
    await page.screenshot({ path: join(SHOTS, 'suites-running-1280.png') });
    await poll(() => page.getByRole('table').first().textContent()).toMatch(/• new[\s\S]*• new/);
    handler.behaviour.delayMs = 0;
    expect(handler.received.every((request) => request.verified)).toBe(true);

    handler.behaviour.amountFactor = 2;
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await poll(() => page.getByRole('table').first().textContent()).toMatch(/≠ changed[\s\S]*≠ changed/);
    await poll(() => list.getByRole('button').first().textContent()).toMatch(/2 changed/);
    await page.getByRole('button', { name: /Case 1: changed/ }).click();
    const differences = page.getByRole('table', { name: 'Differences' });
    await poll(() => differences.textContent()).toMatch(/\$\.amount\s*~ changed\s*12900\s*25800/);
    await poll(() => page.getByText('Expected (the accepted answer)').count()).toBe(1);
    await page.screenshot({ path: join(SHOTS, 'suites-changed-1280.png'), fullPage: true });
    await page.setViewportSize({ width: 900, height: 860 });
    await page.screenshot({ path: join(SHOTS, 'suites-changed-900.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 860 });

    handler.received = [];
    await page.getByRole('button', { name: 'Accept', exact: true }).click();
    await poll(() => page.getByRole('status').filter({ hasText: /is the expectation now/ }).count()).toBe(1);
    expect(handler.received).toHaveLength(2); // each case once more, to learn noise
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await poll(() => page.getByRole('table').first().textContent()).toMatch(/✓ pass[\s\S]*✓ pass/);
    expect(problems).toEqual([]);
  });

  it('exports the suite file', async () => {
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export', exact: true }).click();
    const file = await download;
    expect(file.suggestedFilename()).toBe('checkout.suite.ndjson');
    const lines = (await readFile((await file.path())!, 'utf8')).trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ switchboard_suite: 1, name: 'checkout', providers: { stripe: 'stripe' } });
    expect(lines[1].expect).toMatchObject({ status: 200, body_encoding: 'json', body: { amount: 25800 } });
  });

  it('runs it under a chaos profile: a bad spec is said and blocks Run; the run says its chaos and seed, each case its idempotency in words', async () => {
    const chaosField = page.getByLabel('Chaos profile');
    await chaosField.fill('duplicate=2');
    await poll(() => page.getByRole('alert').filter({ hasText: /^Chaos: duplicate\.probability/ }).count()).toBe(1);
    await poll(() => page.getByRole('button', { name: 'Run', exact: true }).isDisabled()).toBe(true);
    // Pasted oddities: a NUL, a megabyte. Said in one short escaped line, Run blocked, nothing echoed whole.
    for (const [spec, said] of [
      ['seed=1\u0000', /^Chaos "seed=1\\u0000": not a number$/],
      [`seed=1,${'z'.repeat(1024 * 1024)}`, /^Chaos: 1,048,583 characters is not a profile \(at most 500; /],
    ] as const) {
      await chaosField.fill(spec);
      const alert = page.getByRole('alert').filter({ hasText: /^Chaos/ });
      await poll(() => alert.textContent()).toMatch(said);
      expect(((await alert.textContent()) ?? '').length).toBeLessThan(200);
      await poll(() => page.getByRole('button', { name: 'Run', exact: true }).isDisabled()).toBe(true);
    }
    await page.setViewportSize({ width: 900, height: 860 });
    await page.screenshot({ path: join(SHOTS, 'suites-chaos-error-900.png') });
    await page.setViewportSize({ width: 1280, height: 860 });
    await chaosField.fill('duplicate=1,copies=1,after=0,delay=0-50,seed=2');
    await poll(() => page.getByRole('button', { name: 'Run', exact: true }).isDisabled()).toBe(false);
    // A handler that answers 409 to a delivery it already took (its answers otherwise as accepted).
    handler.reset();
    handler.behaviour.amountFactor = 2;
    handler.behaviour.rejectRepeats = true;
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const table = page.getByRole('table').first();
    await poll(() => table.textContent()).toMatch(/≠ changed[\s\S]*✕ not idempotent[\s\S]*×1 duplicate \(409\)[\s\S]*≠ changed[\s\S]*✕ not idempotent/);
    await poll(() => page.locator('.run-chaos').textContent()).toMatch(/Chaos: duplicate=1,copies=1,after=0,delay=0-50,seed=2 \(seed 2: the same profile repeats every decision\)/);
    expect(handler.received).toHaveLength(4);
    expect(handler.received.every((request) => request.verified)).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'suites-chaos-1280.png'), fullPage: true });
    await page.getByRole('button', { name: /Case 1: changed/ }).click();
    await poll(() => page.getByRole('region', { name: 'Case 1' }).textContent()).toMatch(/not idempotent: the first send got 200, duplicate 1 got 409 — a provider would keep retrying or disable the endpoint/);
    await page.screenshot({ path: join(SHOTS, 'suites-chaos-case-1280.png'), fullPage: true });
    await page.setViewportSize({ width: 900, height: 860 });
    await page.screenshot({ path: join(SHOTS, 'suites-chaos-case-900.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 860 });
    await chaosField.fill('');
    handler.reset();
    handler.behaviour.amountFactor = 2;
    expect(problems).toEqual([]);
  });

  it('saves the current filter as a suite, and says why it cannot when nothing matches', async () => {
    await page.getByRole('link', { name: 'Events' }).click();
    await page.getByLabel('Event type').fill('invoice');
    await poll(() => page.getByRole('listbox', { name: /Events/ }).getByRole('option').count()).toBe(1);
    await page.getByRole('button', { name: 'Save as suite…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Save as suite' });
    await dialog.getByLabel('Suite name').fill('invoices');
    await expect.poll(() => dialog.getByLabel(/The events the current filter selects/).isChecked()).toBe(true);
    await dialog.getByRole('button', { name: 'Save suite' }).click();
    await poll(() => dialog.getByRole('status').textContent()).toMatch(/Saved suite invoices: 1 case\b/);
    await dialog.getByRole('button', { name: 'Close' }).click();

    await page.getByLabel('Event type').fill('nothing.like.this');
    await poll(() => page.getByText('No events match these filters').count()).toBe(1);
    await page.getByRole('button', { name: 'Save as suite…' }).click();
    await dialog.getByLabel('Suite name').fill('empty');
    await dialog.getByRole('button', { name: 'Save suite' }).click();
    await poll(() => dialog.getByRole('alert').textContent()).toMatch(/no stored event matches .*nothing was saved/);
    expect((await t.sb.api.listSuites({})).suites.map((suite) => suite.name)).toEqual(['checkout', 'invoices']);
  });
});
