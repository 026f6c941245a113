import { describe, expect, it } from 'vitest';
import { BackgroundLoop } from '../../../src/core/store/background-loop.js';
import { memoryLogger } from '../../helpers/core.js';

// The loop of the jobs that follow the event log (src/core/store/background-loop.ts, DESIGN §17):
// ingest comes first. While deliveries keep coming it waits; fallen far behind it goes on, but one
// step per pause — its walk and its slices a bounded share of the machine during a long burst
// (the ingest benchmark measured ~6 % of throughput when it ran back to back) — woken batches
// notwithstanding; with ingest quiet it runs step after step.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function loop(options: { ingesting: () => boolean; behind: number }) {
  let steps = 0;
  const background = new BackgroundLoop({
    logger: memoryLogger(),
    lastIngestAt: () => (options.ingesting() ? performance.now() : -Infinity),
    behind: () => options.behind,
    maxBehind: 1_000,
    pollMs: 5_000,
    step: async () => {
      steps++;
      return { done: false };
    },
    failed: (error) => error.message,
  });
  return { background, steps: () => steps };
}

describe('the background loop', () => {
  it('waits while deliveries keep coming and it is not far behind', async () => {
    const { background, steps } = loop({ ingesting: () => true, behind: 10 });
    background.start();
    await sleep(400);
    await background.stop();
    expect(steps()).toBe(0);
  });

  it('far behind during ingest, takes one step per pause — an applied batch waking it every few ms does not hurry it', async () => {
    const { background, steps } = loop({ ingesting: () => true, behind: 5_000 });
    background.start();
    const waking = setInterval(() => background.wake(), 2);
    await sleep(700);
    clearInterval(waking);
    await background.stop();
    // One per 100 ms: ~7 in 700 ms (back to back it would be thousands).
    expect(steps()).toBeGreaterThanOrEqual(1);
    expect(steps()).toBeLessThanOrEqual(12);
  });

  it('runs step after step once ingest is quiet', async () => {
    let ingesting = true;
    const { background, steps } = loop({ ingesting: () => ingesting, behind: 5_000 });
    background.start();
    await sleep(150);
    const paced = steps();
    ingesting = false;
    await sleep(150);
    await background.stop();
    expect(steps() - paced).toBeGreaterThan(50);
  });
});
