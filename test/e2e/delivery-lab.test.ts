import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Stripe from 'stripe';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../helpers/core.js';
import { chromiumAvailable, launch, openPage, RENDERER_DIR, rendererBuilt } from './browser.js';

/**
 * The delivery lab in the UI (DESIGN §15): the attempts mark in the Events list, the attempt
 * timeline in the detail, and the Providers form's answer rules with the quick "Fail the next N
 * deliveries" control — Chromium against a real switchboard, Stripe's library signing.
 * Screenshots at 1280 and 900 px go to docs/screenshots/ with SWITCHBOARD_SCREENSHOTS=1 (else to
 * $TMPDIR/switchboard-e2e-shots/, so a test run never changes the checkout).
 */

const run = chromiumAvailable() && rendererBuilt();
const SHOTS = process.env.SWITCHBOARD_SCREENSHOTS ? join(import.meta.dirname, '..', '..', 'docs', 'screenshots') : join(tmpdir(), 'switchboard-e2e-shots');
mkdirSync(SHOTS, { recursive: true });
const STRIPE_SECRET = 'whsec_ui_lab_secret_0123456789abcdef';
const stripe = new Stripe('sk_test_unused');

let t: TestSwitchboard;
let browser: Browser;
let page: Page;

const poll = <T,>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 20_000 });

async function deliver(id: string, type: string) {
  const payload = JSON.stringify({ id, object: 'event', type, data: { object: { amount_due: 2500 } } });
  return t.deliver('/webhooks/stripe', payload, { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret: STRIPE_SECRET }) });
}

describe.runIf(run)('Delivery lab in the UI', () => {
  beforeAll(async () => {
    [t, browser] = await Promise.all([
      startTestSwitchboard(
        { providers: [{ name: 'stripe', kind: 'stripe', secrets: [{ value: STRIPE_SECRET }], answer: [{ when: { event_type: 'invoice.*' }, status: 503, headers: { 'retry-after': '5' }, first_attempts: 2 }] }] },
        { rendererDir: RENDERER_DIR },
      ),
      launch(),
    ]);
    expect((await deliver('evt_ui_paid', 'checkout.session.completed')).status).toBe(200);
    for (const expected of [503, 503, 200]) expect((await deliver('evt_ui_retry', 'invoice.payment_failed')).status).toBe(expected);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  for (const width of [1280, 900]) {
    it(`shows the attempts mark and the attempt timeline at ${width} px`, async () => {
      ({ page } = await openPage(browser, { width, height: 820 }));
      await page.goto(`${t.sb.url.control}/#token=${TEST_TOKEN}`);
      const rows = page.getByRole('listbox', { name: /Events/ }).getByRole('option');
      await poll(() => rows.count()).toBe(2);
      await poll(() => page.getByLabel('3 attempts').count()).toBe(1);
      await rows.filter({ hasText: 'invoice.payment_failed' }).click();
      const timeline = page.getByRole('region', { name: 'Attempts' });
      await poll(() => timeline.getByRole('listitem').count()).toBe(3);
      expect(await timeline.textContent()).toMatch(/#1.*503.*by answer rule 1.*#2.*503.*by answer rule 1.*#3.*200.*normal answer/);
      await page.screenshot({ path: join(SHOTS, `delivery-lab-attempts-${width}.png`) });

      await page.getByRole('link', { name: 'Providers' }).click();
      await page.getByRole('button', { name: 'Details of stripe' }).click();
      await page.getByRole('button', { name: 'Edit stripe' }).click();
      const rules = page.getByLabel('Answer rules', { exact: true });
      await poll(() => rules.inputValue()).toMatch(/"first_attempts": 2/);
      await page.getByLabel('Deliveries to fail').fill('3');
      await page.getByLabel('Status to answer').fill('500');
      await page.getByRole('button', { name: 'Add rule' }).click();
      await poll(() => rules.inputValue()).toMatch(/^\[\s*\{\s*"status": 500,\s*"first_attempts": 3/);
      await rules.scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SHOTS, `delivery-lab-answer-rules-${width}.png`) });
      if (width === 900) {
        await page.getByRole('button', { name: /^Save/ }).click();
        await poll(() => t.sb.config.providers[0] && 'answer' in t.sb.config.providers[0] ? t.sb.config.providers[0].answer?.length : 0).toBe(2);
        expect((await deliver('evt_ui_new', 'charge.succeeded')).status).toBe(500);
      }
      await page.close();
    }, 90_000);
  }
});
