import { sign } from '@octokit/webhooks-methods';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../helpers/core.js';
import { chromiumAvailable, launch, openPage, RENDERER_DIR, rendererBuilt } from './browser.js';

/**
 * The Events list with the detail pane open, at 1280 and 900 px (issue #26.6): every row keeps
 * its id, its type with the TEST / IMPORT badges, its trust chip (clear of the pane's edge) and
 * its "✕ failed" mark whole. Measured in Chromium (bounding boxes, scrollWidth against
 * clientWidth), not judged by eye; the screenshots land in $SWITCHBOARD_LAYOUT_SHOTS when set.
 */

const run = chromiumAvailable() && rendererBuilt();
const GITHUB_SECRET = 'layout-github-secret';

let t: TestSwitchboard;
let browser: Browser;

async function api(method: string, input: unknown): Promise<any> {
  const response = await fetch(`${t.sb.url.control}/api/${method}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(input),
  });
  if (!response.ok) throw new Error(`${method} answered ${response.status}: ${await response.text()}`);
  return response.json();
}

async function seed() {
  const body = JSON.stringify({ action: 'opened', pull_request: { number: 7, title: 'A pull request with a long title' } });
  await t.deliver('/webhooks/github', body, {
    'content-type': 'application/json',
    'x-github-event': 'pull_request',
    'x-github-delivery': crypto.randomUUID(),
    'x-hub-signature-256': await sign(GITHUB_SECRET, body),
  });
  // A test event (TEST badge) and an imported copy of a delivery (IMPORT badge).
  await api('sendTestEvent', { provider: 'github', event_type: 'pull_request.opened' });
  const exported = await fetch(`${t.sb.url.control}/api/export?format=ndjson&provider=github`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
  const line = JSON.parse((await exported.text()).trim().split('\n')[0]!);
  await api('importEvents', { ndjson: `${JSON.stringify({ ...line, external_id: `imported-${line.external_id}` })}\n` });
  // A forward that gets no answer (port 1 refuses): the row's "✕ failed" mark.
  await t.deliver('/webhooks/storefront-eu-west-relay', JSON.stringify({ type: 'checkout.session.async_payment_succeeded', n: 1 }), { 'content-type': 'application/json' });
  for (let tries = 0; (await api('listEvents', { provider: 'storefront-eu-west-relay' })).events[0]?.last_replay?.delivered !== false; tries++) {
    if (tries > 150) throw new Error('the forward to port 1 was never recorded');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  for (let n = 0; n < 3; n++) await t.deliver('/webhooks/homelab', JSON.stringify({ type: 'backup.finished', n }), { 'content-type': 'application/json' });
}

/** Every visible row, measured: what is cut, and how close the trust chip comes to the list's edge. */
async function measureRows(page: Page) {
  return page.getByRole('listbox', { name: /Events/ }).evaluate((list) => {
    const listBox = list.getBoundingClientRect();
    type Box = { scrollWidth: number; clientWidth: number; getBoundingClientRect(): { left: number; right: number; width: number } } | null;
    const clipped = (element: Box) => !element || element.scrollWidth > element.clientWidth + 0.5;
    const inside = (element: Box) => {
      if (!element) return false;
      const box = element.getBoundingClientRect();
      return box.width > 0 && box.left >= listBox.left - 0.5 && box.right <= listBox.right + 0.5;
    };
    return [...list.querySelectorAll('[role=option]')].map((row) => {
      const trust = row.querySelector('.trust-badge');
      const badges = [...row.querySelectorAll('.origin-badge')];
      const mark = row.querySelector('.replay-mark');
      const id = row.querySelector('.id');
      const typeText = row.querySelector('.type-text');
      return {
        label: row.getAttribute('aria-label'),
        idShown: inside(id) && !clipped(id),
        idText: id?.textContent,
        trustShown: inside(trust) && !clipped(trust),
        trustGapPx: trust ? listBox.right - trust.getBoundingClientRect().right : -1,
        badges: badges.map((badge) => ({ text: badge.textContent, shown: inside(badge) && !clipped(badge) })),
        mark: mark ? { text: mark.textContent, shown: inside(mark) && !clipped(mark) && mark.getBoundingClientRect().width <= (mark.parentElement?.getBoundingClientRect().width ?? 0) + 0.5 } : null,
        typeWidthPx: typeText?.getBoundingClientRect().width ?? 0,
        rowScrolls: list.scrollWidth > list.clientWidth,
      };
    });
  });
}

describe.runIf(run)('the Events list beside the detail pane', () => {
  beforeAll(async () => {
    [t, browser] = await Promise.all([
      startTestSwitchboard(
        {
          providers: [
            { name: 'github', kind: 'github', secrets: [{ value: GITHUB_SECRET }] },
            { name: 'storefront-eu-west-relay', kind: 'open', forward_to: ['http://127.0.0.1:1/webhooks'] },
            { name: 'homelab', kind: 'open' },
          ],
        },
        { rendererDir: RENDERER_DIR },
      ),
      launch(),
    ]);
    await seed();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  for (const width of [1280, 900]) {
    it(`keeps id, type with its badges, trust and the failed mark whole at ${width} px`, async () => {
      const { page, problems } = await openPage(browser, { width, height: 800 });
      await page.goto(t.sb.url.ui);
      const rows = page.getByRole('listbox', { name: /Events/ }).getByRole('option');
      await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(7);
      await rows.filter({ hasText: 'storefront-eu-west-relay' }).click();
      await page.getByRole('complementary', { name: /Event \d+/ }).getByRole('region', { name: 'Verification' }).waitFor();
      await page.waitForTimeout(200);
      if (process.env.SWITCHBOARD_LAYOUT_SHOTS) await page.screenshot({ path: `${process.env.SWITCHBOARD_LAYOUT_SHOTS}/events-detail-${width}.png` });

      const measured = await measureRows(page);
      expect(measured).toHaveLength(7);
      for (const row of measured) {
        expect(row, row.label ?? '').toMatchObject({ idShown: true, trustShown: true, rowScrolls: false });
        expect(row.idText).toMatch(/^#\d+$/);
        // The chip keeps clear of the list's edge (where the detail pane begins).
        expect(row.trustGapPx, row.label ?? '').toBeGreaterThanOrEqual(8);
        // The type gives way, but stays readable.
        expect(row.typeWidthPx, row.label ?? '').toBeGreaterThanOrEqual(100);
        for (const badge of row.badges) expect(badge, row.label ?? '').toMatchObject({ shown: true });
        if (row.mark) expect(row.mark, row.label ?? '').toMatchObject({ text: '✕ failed', shown: true });
      }
      expect(measured.flatMap((row) => row.badges.map((badge) => badge.text)).sort()).toEqual(['IMPORT', 'TEST']);
      expect(measured.filter((row) => row.mark).length).toBe(1);
      expect(problems).toEqual([]);
      await page.context().close();
    });
  }

  for (const width of [1280, 900]) {
    it(`keeps every screen's tab and the live lamp inside the top bar at ${width} px`, async () => {
      const { page } = await openPage(browser, { width, height: 800 });
      await page.goto(t.sb.url.ui);
      await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
      const bar = await page.locator('header.topbar').evaluate((header) => {
        const right = header.getBoundingClientRect().right;
        const links = [...header.querySelectorAll('nav a')].map((link) => ({ text: link.textContent, right: link.getBoundingClientRect().right }));
        const lamp = header.querySelector('[role="status"]')!.getBoundingClientRect().right;
        return { right, links, lamp, scrolls: header.scrollWidth > header.clientWidth + 0.5 };
      });
      expect(bar.links.map((link) => link.text)).toEqual(['Events', 'Providers', 'Connect', 'Settings', 'Suites', 'Shapes']);
      for (const link of bar.links) expect(link.right, link.text ?? '').toBeLessThanOrEqual(bar.right);
      expect(bar.lamp).toBeLessThanOrEqual(bar.right);
      expect(bar.scrolls).toBe(false);
      await page.context().close();
    });
  }

  it('keeps one line per row, every column, without the detail pane at 1280 px', async () => {
    const { page } = await openPage(browser, { width: 1280, height: 800 });
    await page.goto(t.sb.url.ui);
    const rows = page.getByRole('listbox', { name: /Events/ }).getByRole('option');
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(7);
    const heights = await rows.evaluateAll((elements) => elements.map((row) => row.getBoundingClientRect().height));
    expect(new Set(heights)).toEqual(new Set([34]));
    for (const row of await measureRows(page)) expect(row).toMatchObject({ idShown: true, trustShown: true, rowScrolls: false });
    await page.context().close();
  });
});
