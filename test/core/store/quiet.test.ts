import { describe, expect, it } from 'vitest';
import { waitForQuiet } from '../../../src/core/store/quiet.js';

/** Retention's VACUUM waits for a pause in reads (src/core/store/quiet.ts), with real timers. */
describe('waitForQuiet', () => {
  it('returns once the activity has paused for the quiet time', async () => {
    let last = performance.now();
    const busy = setInterval(() => (last = performance.now()), 10);
    setTimeout(() => clearInterval(busy), 200);
    const started = performance.now();
    await waitForQuiet(() => last, { quietMs: 100, maxWaitMs: 5_000, pollMs: 20 });
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(280); // 200 ms of activity, then 100 ms of quiet (less a poll)
    expect(waited).toBeLessThan(4_000);
  });

  it('stops waiting at the limit when the activity never pauses, and at once when stopped', async () => {
    let last = performance.now();
    const busy = setInterval(() => (last = performance.now()), 10);
    try {
      let started = performance.now();
      await waitForQuiet(() => last, { quietMs: 1_000, maxWaitMs: 150, pollMs: 20 });
      expect(performance.now() - started).toBeGreaterThanOrEqual(140);
      expect(performance.now() - started).toBeLessThan(1_000); // not the 1 s quiet time it never saw
      started = performance.now();
      await waitForQuiet(() => last, { quietMs: 1_000, maxWaitMs: 10_000, pollMs: 20, stopped: () => true });
      expect(performance.now() - started).toBeLessThan(1_000); // not the 10 s it would wait
    } finally {
      clearInterval(busy);
    }
  });

  it('does not wait when nothing happened lately', async () => {
    const started = performance.now();
    await waitForQuiet(() => -Infinity, { quietMs: 10_000, maxWaitMs: 10_000 });
    expect(performance.now() - started).toBeLessThan(1_000); // not the 10 s quiet time
  });
});
