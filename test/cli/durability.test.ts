import { sign } from '@octokit/webhooks-methods';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { EventStore } from '../../src/core/store/event-store.js';
import { openPglite } from '../../src/core/store/sql-client.js';
import { spawnServe } from '../helpers/cli.js';

const SECRET = 'durability-secret-0123456789';
const TOTAL = 400;
const CONCURRENCY = 32;
let dataDir: string;

afterAll(() => rm(dataDir, { recursive: true, force: true }));

/** The first process: `switchboard serve`, or the core with its journal applier stopped part way. */
async function startFirst(kind: 'serve' | 'paused-applier', args: string[]): Promise<{ child: ChildProcess; receiver: string; exited: Promise<unknown>; stderr: () => string }> {
  if (kind === 'serve') {
    const serve = await spawnServe(args, { GH_SECRET: SECRET });
    return { child: serve.child, receiver: serve.receiver, exited: serve.exited, stderr: serve.stderr };
  }
  const child = spawn(process.execPath, [join(import.meta.dirname, '..', 'helpers', 'paused-applier-child.mjs'), dataDir], {
    env: { ...process.env, GH_SECRET: SECRET, APPLY_FIRST: String(TOTAL / 10) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk) => (err += chunk));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const receiver = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk) => {
      out += chunk;
      const url = /receiver (http:\/\/\S+)/.exec(out)?.[1];
      if (url) resolve(url);
    });
    void exited.then(() => reject(new Error(`the child exited before starting: ${err}`)));
  });
  return { child, receiver, exited, stderr: () => err };
}

/**
 * Acknowledged from the journal, under a crash: every delivery that got a 200 must be stored
 * after SIGKILL and restart — also when most of them were still only in the journal — and the
 * restart (plus the provider's redeliveries) must not store any of them twice.
 */
it.each(['serve', 'paused-applier'] as const)('keeps every acknowledged delivery across a SIGKILL, none twice (%s)', async (kind) => {
  dataDir = await mkdtemp(join(tmpdir(), 'switchboard-durable-'));
  await writeFile(join(dataDir, 'config.json'), JSON.stringify({ providers: [{ name: 'github', kind: 'github', secrets: [{ env: 'GH_SECRET' }] }] }));
  const args = ['--data-dir', dataDir, '--port', '0', '--control-port', '0'];
  const serve = await startFirst(kind, args);

  const bodies = Array.from({ length: TOTAL }, (_, i) => JSON.stringify({ ref: 'refs/heads/main', n: i, pad: 'x'.repeat(1500) }));
  const signatures = await Promise.all(bodies.map((body) => sign(SECRET, body)));
  const acked = new Map<string, number>();
  let next = 0;
  let killed = false;

  async function worker(): Promise<void> {
    while (next < TOTAL) {
      const i = next++;
      try {
        const response = await fetch(`${serve.receiver}/webhooks/github`, {
          method: 'POST',
          body: bodies[i],
          headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': `d-${i}`, 'x-hub-signature-256': signatures[i]! },
        });
        if (response.status === 200) acked.set(`d-${i}`, ((await response.json()) as { id: number }).id);
      } catch {
        // the connection died with the process: not acknowledged, so the provider would retry
      }
      if (!killed && acked.size >= TOTAL / 3) {
        killed = true;
        serve.child.kill('SIGKILL');
      }
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await serve.exited;
  expect(killed).toBe(true);
  expect(acked.size).toBeGreaterThanOrEqual(TOTAL / 3);
  expect(acked.size).toBeLessThan(TOTAL);

  // Restart on the same data dir (the dead process's lock is stale) and redeliver everything,
  // as GitHub would for the deliveries it never got a 200 for.
  const again = await spawnServe(args, { GH_SECRET: SECRET });
  if (kind === 'paused-applier') {
    // The journal held acknowledged events the database did not have: applied before the ports opened.
    const applied = /journal: applying (\d+) events received before the last stop/.exec(again.stderr());
    expect(applied, again.stderr()).not.toBeNull();
    expect(Number(applied![1])).toBeGreaterThan(0);
  }
  const redelivered = await Promise.all(
    bodies.map(async (body, i) => {
      const response = await fetch(`${again.receiver}/webhooks/github`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': `d-${i}`, 'x-hub-signature-256': signatures[i]! },
      });
      return { i, status: response.status, answer: (await response.json()) as { id: number; duplicate: boolean } };
    }),
  );
  for (const { i, status, answer } of redelivered) {
    expect(status).toBe(200);
    const first = acked.get(`d-${i}`);
    if (first !== undefined) expect(answer).toEqual({ id: first, duplicate: true });
  }
  again.child.kill('SIGTERM');
  expect(await again.exited).toBe(0);

  const store = new EventStore(await openPglite(dataDir));
  try {
    const ids: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listEvents({ provider: 'github', limit: 200, cursor });
      ids.push(...page.items.map((event) => event.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(ids).toHaveLength(TOTAL);
    for (const id of acked.values()) expect(ids).toContain(id);
  } finally {
    await store.close();
  }
  await rm(dataDir, { recursive: true, force: true });
}, 120_000);
