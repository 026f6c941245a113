import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ReceiveClock } from '../../../src/core/journal/receive-clock.js';
import { errnoOf, WriteTrouble } from '../../../src/core/journal/write-trouble.js';
import { memoryLogger } from '../../helpers/core.js';

// The journal's two small parts: why it cannot be written (what /healthz answers) and the
// receive time a write's events share.

describe('journal write trouble', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchboard-trouble-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('says why from a failed append until one works, logging once at each end', async () => {
    const logger = memoryLogger();
    const trouble = new WriteTrouble(dir, logger);
    await trouble.check();
    expect(await trouble.line()).toBeNull();
    const full = Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    trouble.appendFailed(full);
    trouble.appendFailed(full);
    const line = await trouble.line();
    expect(line).toContain(dir);
    expect(line).toMatch(/space/i);
    expect(logger.lines.filter((entry) => entry.includes('answered 503'))).toHaveLength(1);
    trouble.appendWorked();
    trouble.appendWorked();
    expect(await trouble.line()).toBeNull();
    expect(logger.lines.filter((entry) => entry.includes('writing works again'))).toHaveLength(1);
    expect(errnoOf(full)).toBe('ENOSPC');
  });

  it('a directory found unusable is checked again when asked, and clears once it is there', async () => {
    const missing = join(dir, 'journal');
    const logger = memoryLogger();
    const trouble = new WriteTrouble(missing, logger);
    await trouble.check();
    expect(await trouble.line()).toContain(missing);
    await mkdir(missing);
    expect(await trouble.line()).toBeNull();
    expect(logger.lines.some((entry) => entry.includes('writable again'))).toBe(true);
  });
});

describe('journal receive clock', () => {
  it('gives one time per write, later with each write, never going back', () => {
    const clock = new ReceiveClock();
    const first = clock.now();
    expect(clock.now()).toBe(first);
    expect(first).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const times = [first];
    for (let i = 0; i < 1_000; i++) {
      clock.nextWrite();
      times.push(clock.now());
    }
    // Microsecond ISO strings of one width sort as the times do: strictly increasing.
    for (let i = 1; i < times.length; i++) expect(times[i]! > times[i - 1]!).toBe(true);
    expect(Math.abs(Date.parse(times.at(-1)!) - Date.now())).toBeLessThan(5_000);
  });
});
