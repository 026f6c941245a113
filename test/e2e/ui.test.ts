import { sign } from '@octokit/webhooks-methods';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../helpers/core.js';
import { chromiumAvailable, launch, openPage, RENDERER_DIR, rendererBuilt } from './browser.js';

/**
 * The web UI end to end: Chromium against a real switchboard (real receiver, real PGlite, real
 * HTTP/SSE API), a real local consumer for replays, and GitHub's own signing library for
 * deliveries. One browser and one switchboard for the whole file.
 */

const run = chromiumAvailable() && rendererBuilt();
const GITHUB_SECRET = 'e2e-github-secret-8d2f';

let t: TestSwitchboard;
let browser: Browser;
let page: Page;
let problems: string[];
let consumer: Server;
let consumerUrl: string;
const consumed: { url: string; body: string }[] = [];

/** The machine is shared and slow at times: wait generously for what must happen. */
const poll = <T,>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 15_000 });
const eventRows = () => page.getByRole('listbox', { name: /Events/ }).getByRole('option');

async function githubDelivery(secret: string, body: string, event = 'issues', id = crypto.randomUUID()) {
  return t.deliver('/webhooks/github', body, {
    'content-type': 'application/json',
    'x-github-event': event,
    'x-github-delivery': id,
    'x-hub-signature-256': await sign(secret, body),
  });
}

describe.runIf(run)('web UI', () => {
  beforeAll(async () => {
    consumer = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        consumed.push({ url: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
        if (req.url === '/fail') res.writeHead(500, { 'content-type': 'text/plain' }).end('consumer broke');
        else res.writeHead(202, { 'content-type': 'application/json' }).end('{"queued":true}');
      });
    });
    await new Promise<void>((resolve) => consumer.listen(0, '127.0.0.1', resolve));
    consumerUrl = `http://127.0.0.1:${(consumer.address() as AddressInfo).port}`;
    [t, browser] = await Promise.all([
      startTestSwitchboard(
        { providers: [{ name: 'homelab', kind: 'open' }], replay: { default_target: `${consumerUrl}/webhooks` } },
        { rendererDir: RENDERER_DIR },
      ),
      launch(),
    ]);
    ({ page, problems } = await openPage(browser));
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await new Promise<void>((resolve) => consumer?.close(() => resolve()));
  });

  it('takes the token from the fragment, removes it from the address bar, and teaches when empty', async () => {
    await page.goto(t.sb.url.ui);
    await page.getByRole('heading', { name: 'No events yet' }).waitFor();
    expect(page.url()).not.toContain(TEST_TOKEN);
    expect(await page.getByRole('status').filter({ hasText: 'Live' }).count()).toBe(1);
    // The empty state shows the receive URL and a curl line that works as-is for an open provider.
    await poll(() => page.getByLabel('Try-it command', { exact: true }).textContent()).toContain(`${t.sb.url.receiver}/webhooks/homelab`);
  });

  it('shows a delivery live, without a reload', async () => {
    await t.deliver('/webhooks/homelab', JSON.stringify({ type: 'deploy.finished', service: 'api', build: { number: 4711 } }), {
      'content-type': 'application/json',
      'x-homelab-run': 'run-93',
    });
    const row = page.getByRole('option', { name: /homelab deploy\.finished event \d+, open/ });
    await row.waitFor();
    expect(await row.getByText('open').count()).toBe(1);
  });

  it('opens an event on click: trust badge, payload tree and headers', async () => {
    await page.getByRole('option', { name: /homelab deploy\.finished/ }).click();
    const detail = page.getByRole('complementary', { name: /Event \d+/ });
    await detail.getByRole('region', { name: 'Verification' }).getByText('Not verified').waitFor();
    await detail.getByText('"deploy.finished"').waitFor();
    await detail.getByText('4711').waitFor();
    await detail.getByRole('button', { name: /Collapse build/ }).click();
    await detail.getByText('1 key').waitFor();
    await detail.getByRole('tab', { name: 'Hex' }).click();
    expect(await detail.getByLabel('Body hex dump').textContent()).toMatch(/^00000000 {2}7b 22 74 79 70 65/);
    // The row's time has the exact stored time as its tooltip.
    const row = page.getByRole('option', { name: /homelab deploy\.finished/ });
    expect(await row.locator('.time').getAttribute('title')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    await detail.getByRole('tab', { name: /^Headers/ }).click();
    const headers = detail.getByRole('table', { name: 'Request headers' });
    expect(await headers.getByRole('row', { name: /x-homelab-run/ }).textContent()).toContain('run-93');
  });

  it('replays to the default target and shows the consumer’s answer in the Replay tab, above the fold', async () => {
    const detail = page.getByRole('complementary', { name: /Event \d+/ });
    await detail.getByRole('tab', { name: /^Replay/ }).click();
    expect(await detail.getByLabel('Target URL').inputValue()).toBe(`${consumerUrl}/webhooks`);
    await detail.getByRole('button', { name: 'Send replay' }).click();
    const result = detail.getByRole('region', { name: 'Replay response' });
    await result.getByText(/Response\s*202\s*in/).waitFor();
    await result.getByRole('tabpanel').getByText('queued').waitFor();
    expect(await result.getByText('Sent:').locator('..').textContent()).toContain('not re-signed');
    expect(await result.textContent()).toContain('by ui');
    expect(consumed.at(-1)).toMatchObject({ url: '/webhooks', body: expect.stringContaining('"deploy.finished"') });
    expect(await detail.getByRole('region', { name: 'History' }).getByRole('button').count()).toBe(1);
    // The payload is on its own tab: the response is in view without scrolling the pane.
    expect(await detail.getByRole('tablist', { name: 'Body view', exact: true }).count()).toBe(0);
    const pane = await detail.locator('.detail-body').boundingBox();
    const answer = await result.getByText(/Response\s*202\s*in/).boundingBox();
    expect(answer!.y + answer!.height).toBeLessThan(pane!.y + pane!.height);
  });

  it('replays with r, with an edited payload', async () => {
    const detail = page.getByRole('complementary', { name: /Event \d+/ });
    await detail.getByLabel('Edit payload and headers').check();
    await detail.getByLabel('Payload', { exact: true }).fill('{"edited":true}');
    await detail.getByLabel('Extra headers', { exact: true }).fill('X-From-Ui: yes');
    await page.getByRole('listbox', { name: /Events/ }).focus();
    await page.keyboard.press('r');
    await poll(() => consumed.at(-1)?.body).toBe('{"edited":true}');
    await poll(() => detail.getByRole('region', { name: 'History' }).getByRole('button').count()).toBe(2);
  });

  it('moves with j/k, opens with Enter, searches with /', async () => {
    await t.deliver('/webhooks/homelab', '{"type":"backup.done","disk":"sda-unique-7731"}', { 'content-type': 'application/json' });
    await page.getByRole('option', { name: /backup\.done/ }).waitFor();
    await page.getByRole('button', { name: 'Close event detail' }).click();
    await page.locator('body').click({ position: { x: 5, y: 300 } });
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    await page.keyboard.press('k');
    await page.keyboard.press('Enter');
    await page.getByRole('complementary', { name: /Event \d+/ }).getByText('"backup.done"').waitFor();

    await page.keyboard.press('/');
    expect(await page.evaluate('document.activeElement?.type')).toBe('search');
    await page.keyboard.type('sda-unique-7731');
    await poll(() => eventRows().count()).toBe(1);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await poll(() => eventRows().count()).toBe(2);
  });

  it('adds a provider from the UI and its route answers at once', async () => {
    await page.getByRole('link', { name: 'Providers' }).click();
    await page.getByRole('button', { name: 'Add provider' }).click();
    const form = page.getByRole('region', { name: 'Add a provider' });
    await form.getByLabel('Name').fill('github');
    await form.getByLabel('Kind').selectOption('github');
    await form.getByLabel('Secret 1 source').selectOption('value');
    await form.getByLabel('Secret 1 value').fill(GITHUB_SECRET);
    await form.getByRole('button', { name: 'Add provider' }).click();
    const card = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'github' }) });
    await card.getByText('listening').waitFor();
    expect(await card.getByLabel('github local receive URL', { exact: true }).textContent()).toBe(`${t.sb.url.receiver}/webhooks/github`);
    // Write-only: the secret is described, never shown.
    expect(await page.content()).not.toContain(GITHUB_SECRET);

    const delivered = await githubDelivery(GITHUB_SECRET, '{"action":"opened","issue":{"number":1}}');
    expect(delivered.status).toBe(200);
  });

  it('lists a wrong-secret delivery under rejections, live, with its diagnosis', async () => {
    const refused = await githubDelivery('not-the-secret', '{"action":"closed"}');
    expect(refused.status).toBe(401);
    const table = page.getByRole('table', { name: 'Rejections' });
    const row = table.getByRole('row').filter({ hasText: 'github' });
    await row.waitFor();
    expect(await row.textContent()).toMatch(/secret/i);
  });

  it('disables a provider with its switch', async () => {
    const toggle = page.getByRole('switch', { name: 'Enable github' });
    await toggle.click();
    await poll(() => toggle.getAttribute('aria-checked')).toBe('false');
    expect((await githubDelivery(GITHUB_SECRET, '{}')).status).toBe(404);
    await toggle.click();
    await poll(() => toggle.getAttribute('aria-checked')).toBe('true');
  });

  it('shows the Connect screen with the exact Claude Code command', async () => {
    await page.getByRole('link', { name: 'Connect' }).click();
    const command = page.getByLabel('Claude Code command', { exact: true });
    expect(await command.textContent()).toBe(`claude mcp add --transport http switchboard ${t.sb.url.mcp} --header "Authorization: Bearer ${TEST_TOKEN}"`);
    await page.getByRole('button', { name: 'Copy Claude Code command' }).click();
    await page.getByRole('button', { name: 'Copy Claude Code command' }).getByText('Copied').waitFor();
  });

  it('saves settings and says when a restart is needed', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel(/Receiver port/).fill('17999');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').filter({ hasText: /Restart switchboard for receiver\.port/ }).waitFor();
    expect(t.sb.config.receiver.port).toBe(17_999);
  });

  it('keeps the filters and the open event in the address, across a reload and in a new tab', async () => {
    await page.getByRole('link', { name: 'Events' }).click();
    await t.deliver('/webhooks/homelab', JSON.stringify({ type: 'deploy.started', service: 'web' }), { 'content-type': 'application/json' });
    await page.getByRole('option', { name: /homelab deploy\.started/ }).waitFor();
    // The type box offers the types seen and matches by prefix.
    expect(await page.locator('#event-type-options option').evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value))).toEqual(
      expect.arrayContaining(['deploy.finished', 'deploy.started']),
    );
    await page.getByLabel('Event type').fill('deploy.');
    await page.getByLabel('Trust').selectOption('open');
    await poll(() => eventRows().count()).toBe(2);
    await page.getByRole('option', { name: /homelab deploy\.started/ }).click();
    await page.getByRole('complementary', { name: /Event \d+/ }).getByText('"web"').waitFor();
    await poll(() => page.url()).toMatch(/#\/events\?type=deploy\.&trust=open&event=\d+$/);
    const address = page.url();
    expect(address).not.toContain(TEST_TOKEN);

    await page.reload();
    await page.getByRole('complementary', { name: /Event \d+/ }).getByText('"web"').waitFor();
    expect(await page.getByLabel('Event type').inputValue()).toBe('deploy.');
    expect(await page.getByLabel('Trust').inputValue()).toBe('open');
    await poll(() => eventRows().count()).toBe(2);
    expect(page.url()).toBe(address);

    // A shared address, without the token, in another tab of this browser.
    const other = await page.context().newPage();
    try {
      await other.goto(address);
      await other.getByRole('complementary', { name: /Event \d+/ }).getByText('"web"').waitFor();
      expect(await other.getByLabel('Event type').inputValue()).toBe('deploy.');
    } finally {
      await other.close();
    }
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.getByRole('button', { name: 'Close event detail' }).click();
    await poll(() => page.url()).toMatch(/#\/events$/);
  });

  it('marks an event whose forward failed, live and after a reload', async () => {
    await t.sb.updateConfig({ ...t.sb.config, providers: [...t.sb.config.providers, { name: 'relay', kind: 'open', forward_to: [`${consumerUrl}/fail`] }] });
    await t.deliver('/webhooks/relay', '{"type":"order.paid"}', { 'content-type': 'application/json' });
    const row = page.getByRole('option', { name: /relay order\.paid event \d+, open, last forward failed/ });
    await row.waitFor();
    expect(await row.getByText('✕ 500').count()).toBe(1);
    await page.reload();
    await row.waitFor();
    expect(await row.getByText('✕ 500').getAttribute('title')).toMatch(/The last forward \(forward, .*\) answered 500/);
    await row.click();
    const detail = page.getByRole('complementary', { name: /Event \d+/ });
    await detail.getByRole('tab', { name: 'Replay (1)' }).click();
    const history = detail.getByRole('region', { name: 'History' });
    expect(await history.getByRole('button').textContent()).toMatch(/500.*by forward/);
    await page.getByRole('button', { name: 'Close event detail' }).click();
  });

  it('keeps the rows in view still while deliveries arrive above them', async () => {
    await Promise.all(Array.from({ length: 300 }, (_, i) => t.deliver('/webhooks/homelab', JSON.stringify({ type: 'bulk.item', n: i }), { 'content-type': 'application/json' })));
    await page.getByRole('link', { name: 'Events' }).click();
    const list = page.getByRole('listbox', { name: /Events/ });
    await poll(() => eventRows().count()).toBeGreaterThan(20);
    await list.evaluate((el) => el.scrollTo(0, 3400));
    const firstVisible = () =>
      list.evaluate((el) => {
        const top = el.getBoundingClientRect().top;
        return [...el.querySelectorAll('[role=option]')].find((row) => row.getBoundingClientRect().bottom > top + 1)?.id;
      });
    await poll(firstVisible).toMatch(/^event-row-/);
    const before = await firstVisible();
    const loaded = async () => Number(/^([\d,]+)/.exec((await page.locator('.list-footer').textContent()) ?? '')?.[1]?.replace(/,/g, ''));
    const countBefore = await loaded();
    await Promise.all(Array.from({ length: 5 }, (_, i) => t.deliver('/webhooks/homelab', JSON.stringify({ type: 'bulk.late', n: i }), { 'content-type': 'application/json' })));
    await poll(loaded).toBe(countBefore + 5);
    expect(await firstVisible()).toBe(before);
    await list.evaluate((el) => el.scrollTo(0, 0));
    await page.getByRole('option', { name: /bulk\.late/ }).first().waitFor();
  });

  it('ran without console errors or CSP violations', () => {
    expect(problems).toEqual([]);
  });
});
