import { mkdtemp, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSwitchboard, type Switchboard } from '../../../src/core/switchboard.js';
import { memoryLogger } from '../../helpers/core.js';

/** The control-token file replaced by hand while switchboard runs (it leaked: rotate it). */

const FIRST = 'first-control-token-0123456789abcdefghijklmnop';
const SECOND = 'second-control-token-0123456789abcdefghijklmno';
const WAIT_MS = 8_000;

let dataDir: string;
let sb: Switchboard;
const logger = memoryLogger();

async function logged(pattern: RegExp, from: number): Promise<string> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const line = logger.lines.slice(from).find((candidate) => pattern.test(candidate));
    if (line) return line;
    if (Date.now() > deadline) throw new Error(`no log line like ${pattern}; got:\n${logger.lines.slice(from).join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function apiStatus(token: string): Promise<number> {
  const response = await fetch(`${sb.url.control}/api/getSettings`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
  await response.arrayBuffer();
  return response.status;
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'switchboard-token-'));
  await writeFile(join(dataDir, 'control-token'), `${FIRST}\n`, { mode: 0o600 });
  sb = createSwitchboard({ dataDir, databaseUrl: 'memory://', logger, rendererDir: null, env: {}, receiverPort: 0, controlPort: 0 });
  await sb.start();
});
afterAll(async () => {
  await sb?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('control-token edited while switchboard runs', () => {
  const path = () => join(dataDir, 'control-token');

  it('a replaced token applies at once: the old one gets 401, the new one 200, and neither is logged', async () => {
    expect(await apiStatus(FIRST)).toBe(200);
    const from = logger.lines.length;
    await writeFile(`${path()}.tmp`, `${SECOND}\n`, { mode: 0o600 });
    await rename(`${path()}.tmp`, path());
    expect(await logged(/control-token replaced: the previous token no longer works/, from)).toBeTruthy();
    expect(await apiStatus(FIRST)).toBe(401);
    expect(await apiStatus(SECOND)).toBe(200);
    expect(sb.token).toBe(SECOND);
    expect(sb.url.ui).toContain(`#token=${SECOND}`);
    expect(logger.lines.join('\n')).not.toMatch(new RegExp(`${FIRST}|${SECOND}`));
  });

  it('refuses an unusable token in one line and keeps the previous one', async () => {
    const from = logger.lines.length;
    await writeFile(path(), 'short\n');
    expect(await logged(/control-token not applied: a control token is one line of at least 32 characters .* — keeping the previous token$/, from)).toBeTruthy();
    expect(await apiStatus(SECOND)).toBe(200);
    expect(await apiStatus('short')).toBe(401);
  });

  it('keeps the running token when the file is deleted', async () => {
    const from = logger.lines.length;
    await unlink(path());
    expect(await logged(/control-token was removed — the running switchboard keeps its token/, from)).toBeTruthy();
    expect(await apiStatus(SECOND)).toBe(200);
  });
});
