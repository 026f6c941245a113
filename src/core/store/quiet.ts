/**
 * Waits for a pause in some activity: until `lastActivityAt()` (a performance.now() time) is at
 * least `quietMs` old, checking every `pollMs`, but no longer than `maxWaitMs` in all, and not
 * past `stopped()`. Retention's VACUUM uses it to run when nobody is reading: reads wait for it
 * while it runs (EventStore.reclaimSpace).
 */
export async function waitForQuiet(
  lastActivityAt: () => number,
  options: { quietMs: number; maxWaitMs: number; pollMs?: number; stopped?: () => boolean },
): Promise<void> {
  const deadline = performance.now() + options.maxWaitMs;
  for (;;) {
    const now = performance.now();
    if (options.stopped?.() || now - lastActivityAt() >= options.quietMs || now >= deadline) return;
    const wait = Math.min(options.pollMs ?? 1_000, options.quietMs - (now - lastActivityAt()), deadline - now);
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, wait)).unref());
  }
}
