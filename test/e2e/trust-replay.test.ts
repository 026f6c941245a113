import { generateKeyPairSync } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../helpers/core.js';
import { startConsumer, type Consumer } from '../core/replay/consumer.js';
import { chromiumAvailable, launch, openPage, RENDERER_DIR, rendererBuilt } from './browser.js';

/**
 * Trust and replay targets in Chromium (issue #26.1, #26.3, #26.4), at 1280 and 900 px: an
 * imported line that claims "signed, verified" is never shown with the green badge and its
 * replay panel warns before re-signing; a Discord test event says switchboard signed it; `r`
 * on a Stripe event shows and uses Stripe's own forward target, not the global default (here
 * the GitHub handler), and Copy as cURL names the same target. Screenshots go to
 * $SWITCHBOARD_SHOTS when it is set, to be looked at.
 */

const run = chromiumAvailable() && rendererBuilt();
const STRIPE_SECRET = 'whsec_e2e_trust_0123456789abcdef';
const stripe = new Stripe('sk_test_e2e_trust');
const discordKey = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('hex');

let t: TestSwitchboard;
let browser: Browser;
let handlers: Consumer;
const ids: Record<string, number> = {};

async function api<T = any>(method: string, input: unknown): Promise<T> {
  const response = await fetch(`${t.sb.url.control}/api/${method}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(input),
  });
  if (!response.ok) throw new Error(`${method} answered ${response.status}: ${await response.text()}`);
  return response.json() as Promise<T>;
}

async function shot(page: Page, name: string): Promise<void> {
  const dir = process.env.SWITCHBOARD_SHOTS;
  if (!dir) return;
  await mkdir(dir, { recursive: true });
  await page.screenshot({ path: `${dir}/${name}.png` });
}

describe.runIf(run)('trust and replay targets in the UI', () => {
  beforeAll(async () => {
    handlers = await startConsumer();
    [t, browser] = await Promise.all([
      startTestSwitchboard(
        {
          providers: [
            { name: 'stripe', kind: 'stripe', secrets: [{ value: STRIPE_SECRET }], forward_to: [handlers.url('/stripe')] },
            { name: 'github', kind: 'github', secrets: [{ value: 'e2e-trust-github' }] },
            { name: 'discord', kind: 'discord', public_key: discordKey },
          ],
          replay: { default_target: handlers.url('/github') },
        },
        { rendererDir: RENDERER_DIR },
      ),
      launch(),
    ]);
    const body = JSON.stringify({ id: 'evt_e2e_paid', object: 'event', type: 'invoice.paid', data: { object: { amount_paid: 4200 } } });
    const forwarded = handlers.nextRequest();
    const answer = await t.deliver('/webhooks/stripe', body, { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: body, secret: STRIPE_SECRET }) });
    ids.stripe = answer.json.id;
    await forwarded;
    ids.discord = (await api('sendTestEvent', { provider: 'discord' })).event.id;
    const forged = JSON.stringify({ id: 'evt_forged_e2e', object: 'event', type: 'charge.refunded', data: { object: { amount: 99_999 } } });
    const line = {
      provider: 'stripe', family: 'webhook', event_type: 'charge.refunded', external_id: 'evt_forged_e2e', trust_mode: 'signed', verified: true,
      verify_detail: 'stripe v1 signature matched secret #1, timestamp skew 0 s', received_at: new Date().toISOString(),
      headers: { 'content-type': 'application/json' }, content_type: 'application/json', payload_base64: Buffer.from(forged).toString('base64'),
    };
    expect(await api('importEvents', { ndjson: JSON.stringify(line) })).toMatchObject({ imported: 1 });
    ids.imported = (await api('listEvents', { origin: 'import' })).events[0].id;
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await handlers?.close();
  });

  for (const width of [1280, 900]) {
    it(`never shows an imported event with the green badge, and warns before re-signing it (${width} px)`, async () => {
      const { page, problems } = await openPage(browser, { width, height: 800 });
      await page.goto(t.sb.url.ui);
      const row = page.getByRole('option', { name: new RegExp(`event ${ids.imported}, the file says signed, not verified`) });
      await row.waitFor();
      const badge = row.locator('.trust-badge');
      expect(await badge.getAttribute('class')).toContain('trust-unverified');
      expect(await badge.textContent()).toBe('signed?');
      expect(await badge.evaluate((element) => element.scrollWidth <= element.clientWidth + 0.5)).toBe(true);

      await row.click();
      const detail = page.getByRole('complementary', { name: `Event ${ids.imported}` });
      const card = detail.getByRole('region', { name: 'Verification' });
      await card.getByText('IMPORTED · file says signed').waitFor();
      expect(await card.locator('.trust-signed').count()).toBe(0);
      expect(await card.textContent()).toMatch(/Not verified — Imported from a file that says signed/);
      expect(await card.textContent()).toContain('imported: the file says signed, verified — not verified by this instance');
      expect(await card.textContent()).not.toContain('stripe v1 signature matched');
      await detail.getByRole('tab', { name: /^Replay/ }).click();
      await detail.getByRole('note').getByText('Imported event, never verified here.').waitFor();
      await shot(page, `imported-${width}`);
      expect(problems).toEqual([]);
      await page.context().close();
    });

    it(`says a Discord test event was signed by switchboard (${width} px)`, async () => {
      const { page, problems } = await openPage(browser, { width, height: 800 });
      await page.goto(t.sb.url.ui);
      const row = page.getByRole('option', { name: new RegExp(`event ${ids.discord},`) });
      await row.waitFor();
      expect(await row.locator('.trust-badge').textContent()).toBe('test key');
      await row.click();
      const card = page.getByRole('complementary', { name: `Event ${ids.discord}` }).getByRole('region', { name: 'Verification' });
      await card.getByText('TEST · signed by switchboard').waitFor();
      expect(await card.textContent()).toMatch(/Verified with switchboard's own key/);
      expect(await card.textContent()).toMatch(/signed by switchboard, not by Discord/);
      await shot(page, `discord-test-${width}`);
      expect(problems).toEqual([]);
      await page.context().close();
    });

    it(`r on a Stripe event shows and uses Stripe's forward target, not the global default; cURL names it too (${width} px)`, async () => {
      const { page, problems } = await openPage(browser, { width, height: 800 });
      await page.goto(t.sb.url.ui);
      const row = page.getByRole('option', { name: new RegExp(`stripe invoice\\.paid event ${ids.stripe},`) });
      await row.click();
      const detail = page.getByRole('complementary', { name: `Event ${ids.stripe}` });
      await detail.getByText(`→ ${handlers.url('/stripe')}`).waitFor();
      const before = handlers.requests.length;
      await page.getByRole('listbox', { name: /Events/ }).focus();
      await page.keyboard.press('r');
      await detail.getByText(`Sends to ${handlers.url('/stripe')} — the provider's forward target`).waitFor();
      await detail.getByRole('region', { name: 'Replay response' }).getByText(/Response\s*200\s*in/).waitFor({ timeout: 15_000 });
      const sent = handlers.requests.slice(before);
      expect(sent.map((request) => request.url)).toEqual(['/stripe']);
      expect(stripe.webhooks.constructEvent(sent[0]!.body, sent[0]!.headers['stripe-signature'] as string, STRIPE_SECRET).id).toBe('evt_e2e_paid');
      await shot(page, `replay-target-${width}`);
      expect(problems).toEqual([]);
      await page.context().close();
    });
  }
});
