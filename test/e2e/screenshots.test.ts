import { sign } from '@octokit/webhooks-methods';
import { Redis } from 'ioredis';
import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startTestSwitchboard, type TestSwitchboard } from '../helpers/core.js';
import { chromiumAvailable, launch, openPage, RENDERER_DIR, rendererBuilt } from './browser.js';

/**
 * Not a test: regenerates docs/screenshots/*.png against a seeded switchboard, at 1280 px wide
 * and, for the screens that change most with width, at 900 px (`*-900.png`).
 *   SWITCHBOARD_SCREENSHOTS=1 npx vitest run test/e2e/screenshots.test.ts
 */

const OUT = join(import.meta.dirname, '..', '..', 'docs', 'screenshots');
const GITHUB_SECRET = 'screenshot-github-secret';
const STRIPE_SECRET = 'whsec_screenshot_secret';
const DOCKERHUB_TOKEN = 'screenshot-dockerhub-token';
const stripe = new Stripe('sk_test_unused');

let t: TestSwitchboard;
let browser: Browser;
let consumer: Server;
let consumerUrl: string;

const wanted = process.env.SWITCHBOARD_SCREENSHOTS === '1';

async function shoot(page: Page, name: string) {
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(OUT, `${name}.png`) });
}

async function seed() {
  const github = async (event: string, body: object, secret = GITHUB_SECRET) => {
    const text = JSON.stringify(body);
    return t.deliver('/webhooks/github', text, {
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/7a3c1e9',
      'x-github-event': event,
      'x-github-delivery': crypto.randomUUID(),
      'x-github-hook-id': '501822733',
      'x-hub-signature-256': await sign(secret, text),
    });
  };
  const stripeEvent = async (type: string, object: object) => {
    const text = JSON.stringify({ id: `evt_${crypto.randomUUID().replace(/-/g, '').slice(0, 24)}`, object: 'event', type, data: { object } });
    return t.deliver('/webhooks/stripe', text, {
      'content-type': 'application/json; charset=utf-8',
      'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
      'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: text, secret: STRIPE_SECRET }),
    });
  };
  await github('push', { ref: 'refs/heads/main', before: '9f2c1d0', after: 'b71e4a3', repository: { full_name: 'acme/storefront' }, pusher: { name: 'ada' }, commits: [{ id: 'b71e4a3', message: 'Fix tax rounding' }] });
  await stripeEvent('customer.created', { id: 'cus_Q2w9', email: 'grace@example.com' });
  await t.deliver('/webhooks/dockerhub', JSON.stringify({ push_data: { tag: 'v2.4.1', pusher: 'ci-bot' }, repository: { repo_name: 'acme/api' } }), {
    'content-type': 'application/json',
    'x-switchboard-token': DOCKERHUB_TOKEN,
  });
  await t.deliver('/webhooks/homelab', JSON.stringify({ type: 'backup.finished', host: 'nas-01', bytes: 48_213_004_112, ok: true }), { 'content-type': 'application/json' });
  const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    await new Promise((resolve) => setTimeout(resolve, 500));
    await redis.publish('deploys', JSON.stringify({ type: 'deploy.started', service: 'checkout', version: '2026.11.30-3' }));
  } catch {
    // No Redis here: the queue provider shows its error state instead.
  } finally {
    redis.disconnect();
  }
  await stripeEvent('payment_intent.succeeded', { id: 'pi_3Q8x', amount: 4200, currency: 'eur', status: 'succeeded' });
  await github('issues', { action: 'opened', issue: { number: 1289, title: 'Webhook retries pile up', user: { login: 'grace' } }, repository: { full_name: 'acme/storefront' } });
  await stripeEvent('checkout.session.completed', { id: 'cs_test_a1B2', amount_total: 12900, currency: 'eur', customer: 'cus_Q2w9', payment_status: 'paid' });
  await github('pull_request', {
    action: 'opened',
    number: 342,
    pull_request: { title: 'Verify webhooks before queueing', user: { login: 'ada' }, head: { ref: 'feature/verify-first' }, base: { ref: 'main' }, draft: false, additions: 120, deletions: 14 },
    repository: { full_name: 'acme/storefront', private: true },
  });
  // A relay that re-serialized the body, and a wrong secret: both end up under Rejections.
  await github('push', { ref: 'refs/heads/main' }, 'an-old-rotated-secret');
}

describe.runIf(wanted && chromiumAvailable() && rendererBuilt())('screenshots', () => {
  beforeAll(async () => {
    await mkdir(OUT, { recursive: true });
    consumer = createServer((req, res) => {
      req.resume();
      // The billing consumer is broken, so the list shows failed forwards.
      if (req.url === '/webhooks/billing') req.on('end', () => res.writeHead(500, { 'content-type': 'text/plain' }).end('TypeError: amount_total is undefined'));
      else req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true,"handler":"storefront.webhooks.github"}'));
    });
    await new Promise<void>((resolve) => consumer.listen(3000, '127.0.0.1', resolve).on('error', () => consumer.listen(0, '127.0.0.1', resolve)));
    consumerUrl = `http://127.0.0.1:${(consumer.address() as AddressInfo).port}`;
    [t, browser] = await Promise.all([
      startTestSwitchboard(
        { receiver: { public_url: 'https://acme-dev.ngrok.app' }, replay: { default_target: `${consumerUrl}/webhooks` } },
        { rendererDir: RENDERER_DIR, env: { GITHUB_WEBHOOK_SECRET: GITHUB_SECRET, STRIPE_WEBHOOK_SECRET: STRIPE_SECRET, DOCKERHUB_TOKEN } },
      ),
      launch(),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await new Promise<void>((resolve) => consumer?.close(() => resolve()));
  });

  it('captures every screen', async () => {
    const { page } = await openPage(browser, { width: 1280, height: 860 });
    await page.goto(t.sb.url.ui);
    await page.getByRole('heading', { name: 'No providers yet' }).waitFor();
    await shoot(page, 'empty-no-providers');

    await t.sb.updateConfig({
      ...t.sb.config,
      providers: [
        { name: 'github', kind: 'github', secrets: [{ env: 'GITHUB_WEBHOOK_SECRET' }], forward_to: [`${consumerUrl}/webhooks/github`] },
        { name: 'stripe', kind: 'stripe', secrets: [{ env: 'STRIPE_WEBHOOK_SECRET' }], forward_to: [`${consumerUrl}/webhooks/billing`] },
        { name: 'dockerhub', kind: 'token', secrets: [{ env: 'DOCKERHUB_TOKEN' }] },
        { name: 'homelab', kind: 'open' },
        { name: 'deploys', kind: 'redis-pubsub', url: { value: 'redis://127.0.0.1:6379' }, channels: ['deploys'] },
        { name: 'slack', kind: 'slack', secrets: [{ env: 'SLACK_SIGNING_SECRET' }] },
        { name: 'discord', kind: 'discord', public_key: 'e2a3b0f0c1d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e' },
        { name: 'shop-eu', kind: 'shopify', secrets: [{ value: 'shpss_screenshot' }], forward_to: ['http://192.168.1.20:3000/webhooks/shopify'] },
        { name: 'billing-paddle', kind: 'paddle', secrets: [{ value: 'pdl_ntfset_screenshot' }] },
        { name: 'clerk', kind: 'standard-webhooks', secrets: [{ value: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }], enabled: false },
      ],
    });
    await page.getByRole('heading', { name: 'No events yet' }).waitFor();
    await shoot(page, 'empty-no-events');

    await seed();
    await fetch(`${t.sb.url.control}/api/sendTestEvent`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.sb.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ provider: 'stripe', event_type: 'invoice.paid' }),
    });
    const row = page.getByRole('option', { name: /github pull_request\.opened/ });
    await row.waitFor();
    await row.click();
    const detail = page.getByRole('complementary', { name: /Event \d+/ });
    await detail.getByText('"Verify webhooks before queueing"').waitFor();
    await page.getByRole('listbox', { name: /Events/ }).focus();
    await shoot(page, 'events');
    await detail.getByRole('tab', { name: /^Replay/ }).click();
    await detail.getByRole('button', { name: 'Send replay' }).click();
    await detail.getByRole('region', { name: 'Replay response' }).waitFor();
    await page.getByRole('listbox', { name: /Events/ }).focus();
    await shoot(page, 'events-replay');

    const narrow = await openPage(browser, { width: 900, height: 860 });
    await narrow.page.goto(t.sb.url.ui); // a new browser context: it keeps the token from here on
    await narrow.page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
    await narrow.page.goto(page.url());
    await narrow.page.getByRole('complementary', { name: /Event \d+/ }).getByText('"Verify webhooks before queueing"').waitFor();
    await shoot(narrow.page, 'events-900');
    await narrow.page.getByRole('button', { name: 'Close event detail' }).click();
    await narrow.page.getByRole('searchbox').fill('acme/storefront');
    await narrow.page.locator('.snippet-line mark').first().waitFor();
    await shoot(narrow.page, 'events-search-900');

    await page.getByRole('link', { name: 'Providers' }).click();
    await page.getByRole('table', { name: 'Rejections' }).waitFor();
    await shoot(page, 'providers');
    await page.getByRole('button', { name: 'Details of github' }).click();
    await shoot(page, 'providers-details');
    await page.getByRole('button', { name: 'Details of github' }).click();
    await narrow.page.getByRole('link', { name: 'Providers' }).click();
    await narrow.page.getByRole('table', { name: 'Rejections' }).waitFor();
    await shoot(narrow.page, 'providers-900');
    await page.getByRole('button', { name: 'Add provider' }).click();
    await page.getByRole('region', { name: 'Add a provider' }).getByLabel('Name').fill('shopify');
    await page.getByRole('region', { name: 'Add a provider' }).getByLabel('Kind').selectOption('shopify');
    await shoot(page, 'providers-add');

    await page.getByRole('link', { name: 'Connect' }).click();
    await page.getByRole('heading', { name: 'Claude Code' }).waitFor();
    await shoot(page, 'connect');

    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('button', { name: 'Save settings' }).waitFor();
    await shoot(page, 'settings');

    const dark = await openPage(browser, { width: 1280, height: 860, colorScheme: 'dark' });
    await dark.page.goto(t.sb.url.ui);
    await dark.page.getByRole('option', { name: /stripe checkout\.session\.completed/ }).click();
    await dark.page.getByRole('complementary', { name: /Event \d+/ }).getByText('"cs_test_a1B2"').waitFor();
    await dark.page.getByRole('listbox', { name: /Events/ }).focus();
    await shoot(dark.page, 'events-dark');
  });
});
