import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSwitchboard, type TestSwitchboard } from '../helpers/core.js';
import { chromiumAvailable, launch, openPage, RENDERER_DIR, rendererBuilt } from './browser.js';

/**
 * A search that runs out of time, in a real browser against a real switchboard. The store is
 * tuned (SearchTuning) so every answer is one 4-row slice — what a phrase the index cannot narrow
 * down gets at a million events: short pages that say how far back they searched. The list must
 * keep searching on its own, say how far it got, and only then say nothing matched.
 */
const run = chromiumAvailable() && rendererBuilt();

let t: TestSwitchboard;
let browser: Browser;
let page: Page;
let problems: string[];
/** What each listEvents answer said, in order. */
const answers: { events: number; searched_back_to: string | undefined; next_cursor: string | undefined }[] = [];

const poll = <T,>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 15_000 });
const eventRows = () => page.getByRole('listbox', { name: /Events/ }).getByRole('option');

describe.runIf(run)('a search that runs out of time, in the web UI', () => {
  beforeAll(async () => {
    [t, browser] = await Promise.all([
      startTestSwitchboard(
        { providers: [{ name: 'homelab', kind: 'open' }] },
        { rendererDir: RENDERER_DIR, searchTuning: { windowRows: 4, budgetMs: 0, indexMaxCandidates: 0 } },
      ),
      launch(),
    ]);
    ({ page, problems } = await openPage(browser));
    // The oldest event holds the word; 20 newer ones do not.
    await t.deliver('/webhooks/homelab', '{"type":"disk.full","disk":"Needle-4242"}', { 'content-type': 'application/json' });
    for (let n = 0; n < 20; n++) await t.deliver('/webhooks/homelab', JSON.stringify({ type: 'tick', n }), { 'content-type': 'application/json' });
    // The server's real answers, each short one held back a little so the browser can be seen between them.
    await page.route('**/api/listEvents', async (route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { events: unknown[]; searched_back_to?: string; next_cursor?: string };
      answers.push({ events: body.events.length, searched_back_to: body.searched_back_to, next_cursor: body.next_cursor });
      if (body.searched_back_to) await new Promise((resolve) => setTimeout(resolve, 250));
      await route.fulfill({ response });
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('keeps searching older events page by page, says how far it got, and finds the oldest match', async () => {
    await page.goto(t.sb.url.ui);
    await poll(() => eventRows().count()).toBe(21);
    answers.length = 0;
    await page.getByRole('searchbox').fill('needle-4242');
    await page.getByText(/^Searching older events… \(searched back to /).waitFor();
    expect(await page.getByRole('heading', { name: 'No events match these filters' }).count()).toBe(0);
    await poll(() => eventRows().count()).toBe(1);
    expect(await eventRows().first().getAttribute('aria-label')).toMatch(/disk\.full/);
    // Several short answers, each with where it stopped, before the one that found it.
    const short = answers.filter((answer) => answer.searched_back_to !== undefined);
    expect(short.length).toBeGreaterThanOrEqual(4);
    for (const answer of short) expect(answer.next_cursor).toBeDefined();
    await poll(() => page.locator('.list-footer').textContent()).toMatch(/^1 event loaded ·/);
  });

  it('says nothing matched only once every event was searched', async () => {
    answers.length = 0;
    await page.getByRole('searchbox').fill('no-such-words-here');
    await page.getByRole('heading', { name: 'No events match these filters' }).waitFor({ timeout: 15_000 });
    expect(answers.filter((answer) => answer.searched_back_to !== undefined).length).toBeGreaterThanOrEqual(4);
    expect(answers.at(-1)?.next_cursor).toBeUndefined();
    expect(problems).toEqual([]);
  });
});
