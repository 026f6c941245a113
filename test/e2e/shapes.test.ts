import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sign } from '@octokit/webhooks-methods';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GITHUB_FIXTURES } from '../../src/core/test-events/github.js';
import { fixtureContext } from '../../src/core/test-events/fixture.js';
import { startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../helpers/core.js';
import { chromiumAvailable, launch, openPage, RENDERER_DIR, rendererBuilt } from './browser.js';

/**
 * Shapes in the UI (DESIGN §9, §16): the DRIFT mark in the list, the detail's Shape tab, and the
 * Shapes screen, in Chromium against a real switchboard fed real (signed) GitHub payloads.
 * Screenshots at 1280 and 900 px go to docs/screenshots/ with SWITCHBOARD_SCREENSHOTS=1 (else to
 * $TMPDIR/switchboard-e2e-shots/, so a test run never changes the checkout).
 */

const run = chromiumAvailable() && rendererBuilt();
const SHOTS = process.env.SWITCHBOARD_SCREENSHOTS ? join(import.meta.dirname, '..', '..', 'docs', 'screenshots') : join(tmpdir(), 'switchboard-e2e-shots');
mkdirSync(SHOTS, { recursive: true });
const SECRET = 'shapes-e2e-secret-0123456789';

let t: TestSwitchboard;
let browser: Browser;
let page: Page;
let problems: string[];
let drifted = 0;
const poll = <T,>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 20_000 });

describe.runIf(run)('Shapes', () => {
  beforeAll(async () => {
    [t, browser] = await Promise.all([
      startTestSwitchboard({ providers: [{ name: 'github', kind: 'github', secrets: [{ env: 'GH_SECRET' }] }] }, { rendererDir: RENDERER_DIR, env: { GH_SECRET: SECRET } }),
      launch(),
    ]);
    const deliver = async (payload: unknown) => {
      const body = JSON.stringify(payload);
      const answer = await t.deliver('/webhooks/github', body, {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-github-delivery': crypto.randomUUID(),
        'x-hub-signature-256': await sign(SECRET, body),
      });
      expect(answer.status).toBe(200);
      return answer.json.id as number;
    };
    const push = () => GITHUB_FIXTURES.find((fixture) => fixture.eventType === 'push')!.build(fixtureContext('github', Date.now())).json as Record<string, any>;
    for (let i = 0; i < 21; i++) await deliver(push());
    const odd = push();
    delete odd['pusher'];
    odd['sender']['login'] = 7;
    odd['deployment_hint'] = 'canary';
    drifted = await deliver(odd);
    await t.sb.shapes.tracker.catchUp();
    mkdirSync(SHOTS, { recursive: true });
    ({ page, problems } = await openPage(browser, { width: 1280, height: 860 }));
    await page.goto(`${t.sb.url.control}/#token=${TEST_TOKEN}`);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('marks the drifted event in the list and shows its drift in the Shape tab', async () => {
    const rows = page.getByRole('listbox', { name: /Events/ }).getByRole('option');
    await poll(() => rows.count()).toBe(22);
    await poll(() => rows.nth(0).textContent()).toMatch(/DRIFT/);
    await poll(() => rows.nth(1).textContent()).not.toMatch(/DRIFT/);
    await rows.nth(0).click();
    await page.getByRole('tab', { name: /Shape · DRIFT/ }).click();
    const tab = page.locator('.shape-tab');
    await poll(() => tab.textContent()).toMatch(/− missing\s*pusher/);
    await poll(() => tab.textContent()).toMatch(/\+ added\s*deployment_hint/);
    await poll(() => tab.textContent()).toMatch(/~ type changed\s*sender\.login/);
    await poll(() => tab.textContent()).toMatch(/Breaks GitHub's published schema[\s\S]*\$\.sender\.login/);
    await poll(() => page.getByRole('button', { name: /Copy TypeScript \(GithubPush\)/ }).count()).toBe(1);
    await page.screenshot({ path: join(SHOTS, 'shape-tab-1280.png') });
    await page.setViewportSize({ width: 900, height: 860 });
    await page.screenshot({ path: join(SHOTS, 'shape-tab-900.png') });
    await page.setViewportSize({ width: 1280, height: 860 });
  }, 60_000);

  it('narrows the list to the drifted events with "Drift only", kept in the address', async () => {
    const rows = page.getByRole('listbox', { name: /Events/ }).getByRole('option');
    await page.getByRole('checkbox', { name: 'Drift only' }).check();
    await poll(() => rows.count()).toBe(1);
    await poll(() => rows.nth(0).textContent()).toMatch(/DRIFT/);
    expect(page.url()).toMatch(/drift=1/);
    await page.getByRole('checkbox', { name: 'Drift only' }).uncheck();
    await poll(() => rows.count()).toBe(22);
  }, 60_000);

  it('lists types on the Shapes screen with fields, presence, drift history and the schema check', async () => {
    await page.getByRole('link', { name: 'Shapes' }).click();
    await page.getByRole('button', { name: /github push/ }).click();
    const detail = page.locator('.shape-detail');
    await poll(() => detail.textContent()).toMatch(/GithubPush/);
    await poll(() => detail.textContent()).toMatch(/Drift history[\s\S]*#\d+/);
    await poll(() => detail.textContent()).toMatch(/GitHub's published schema: event #\d+ breaks it/);
    await poll(() => page.locator('.shape-fields tbody tr').count()).toBeGreaterThan(20);
    await poll(() => detail.textContent()).toMatch(/pusher\.name\s*95\.5 %/);
    await page.screenshot({ path: join(SHOTS, 'shapes-1280.png') });
    await page.setViewportSize({ width: 900, height: 860 });
    await page.screenshot({ path: join(SHOTS, 'shapes-900.png') });
    expect(problems).toEqual([]);
    expect(drifted).toBeGreaterThan(0);
  }, 60_000);
});
