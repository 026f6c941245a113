import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { sign } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GITHUB_FIXTURES } from '../../../src/core/test-events/github.js';
import { fixtureContext } from '../../../src/core/test-events/fixture.js';
import { startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../../helpers/core.js';

// Shapes end to end (DESIGN §16): real GitHub payloads (the catalog's fixtures, which GitHub's own
// schemas accept — test/core/test-events/github-schemas.test.ts) signed with GitHub's library,
// through the receiver, shaped by the tracker; the generated TypeScript checked by the real tsc,
// the generated zod run for real.

const SECRET = 'shapes-test-secret-0123456789';
const require = createRequire(import.meta.url);
const run = promisify(execFile);

describe('shapes', () => {
  let t: TestSwitchboard;
  const payloads: unknown[] = [];

  const api = async (method: string, input: unknown) => {
    const response = await fetch(`${t.sb.url.control}/api/${method}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(input),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  const push = (change: (payload: Record<string, any>) => void = () => {}) => {
    const payload = GITHUB_FIXTURES.find((fixture) => fixture.eventType === 'push')!.build(fixtureContext('github', Date.now())).json as Record<string, any>;
    change(payload);
    return payload;
  };

  const deliver = async (payload: unknown, event = 'push') => {
    const body = JSON.stringify(payload);
    const response = await t.deliver('/webhooks/github', body, {
      'content-type': 'application/json',
      'x-github-event': event,
      'x-github-delivery': crypto.randomUUID(),
      'x-hub-signature-256': await sign(SECRET, body),
    });
    expect(response.status).toBe(200);
    return response.json.id as number;
  };

  beforeAll(async () => {
    t = await startTestSwitchboard({ providers: [{ name: 'github', kind: 'github', secrets: [{ env: 'GH_SECRET' }] }, { name: 'hooks', kind: 'open' }] }, { env: { GH_SECRET: SECRET } });
  }, 60_000);
  afterAll(() => t?.close());

  it('infers the shape of a type, marks drift and GitHub schema violations, and generates types that fit every event', async () => {
    for (let i = 0; i < 22; i++) {
      const payload = push((p) => {
        if (i % 2 === 0) p['note'] = i % 4 === 0 ? 'even' : null;
      });
      payloads.push(payload);
      await deliver(payload);
    }
    await t.sb.shapes.tracker.catchUp();
    const listed = await api('listEvents', { provider: 'github', drift: true });
    expect(listed.body.events).toEqual([]);

    // A push that lost its `repository`, gained a field, and whose sender login is a number.
    const drifted = push((p) => {
      delete p['repository'];
      p['brand_new'] = { x: 1 };
      p['sender']['login'] = 12;
    });
    const driftedId = await deliver(drifted);
    payloads.push(drifted);
    await t.sb.shapes.tracker.catchUp();

    const detail = (await api('getEvent', { id: driftedId })).body.event;
    expect(detail.drift).toEqual(
      expect.arrayContaining([
        { path: 'repository', change: 'missing', was: 'object' },
        { path: 'brand_new', change: 'added', now: 'object' },
        { path: 'sender.login', change: 'type_changed', was: 'string', now: 'number' },
      ]),
    );
    expect(detail.drift.some((mark: { path: string }) => mark.path.startsWith('repository.'))).toBe(false);
    // GitHub's published schema: a push needs its repository, and a login is a string.
    expect(detail.spec_violations).toEqual(expect.arrayContaining([expect.objectContaining({ path: '$', message: expect.stringContaining('repository') })]));
    expect(detail.spec_violations).toEqual(expect.arrayContaining([expect.objectContaining({ path: '$.sender.login' })]));

    const drift = await api('listEvents', { provider: 'github', drift: true });
    expect(drift.body.events.map((event: { id: number; drift: boolean }) => [event.id, event.drift])).toEqual([[driftedId, true]]);
    const all = await api('listEvents', { provider: 'github', limit: 3 });
    expect(all.body.events.map((event: { drift: boolean }) => event.drift)).toEqual([true, false, false]);

    const described = (await api('describeEventType', { provider: 'github', event_type: 'push' })).body;
    expect(described).toMatchObject({ provider: 'github', event_type: 'push', events_seen: 23, drift_events: 1, paths_truncated: false, fields_truncated: false });
    const fields = new Map(described.fields.map((field: { path: string }) => [field.path, field]));
    expect(fields.get('ref')).toMatchObject({ types: ['string'], presence: 1, required: true });
    expect(fields.get('note')).toMatchObject({ required: false });
    expect((fields.get('note') as { types: string[] }).types.sort()).toEqual(['null', 'string']);
    expect(described.drift[0]).toMatchObject({ event_id: driftedId });
    expect(described.spec_violations.event_id).toBe(driftedId);
    expect(described.types.root).toBe('GithubPush');
    expect(described.types.typescript).toContain('export interface GithubPush {');
    expect(described.types.typescript).toContain('export interface GithubPushRepositoryOwner');
    expect(described.types.zod).toContain('export const GithubPushSchema');

    // The TypeScript: tsc --strict with every stored payload assigned to the root type.
    const dir = await mkdtemp(join(tmpdir(), 'switchboard-shape-'));
    try {
      const file = join(dir, 'push.ts');
      await writeFile(file, `${described.types.typescript}\n${payloads.map((payload, i) => `export const e${i}: GithubPush = ${JSON.stringify(payload)};`).join('\n')}\n`);
      const tsc = require.resolve('typescript/bin/tsc');
      await run(process.execPath, [tsc, '--strict', '--noEmit', '--target', 'es2022', '--typeRoots', dir, file]).catch((error: { stdout: string }) => {
        throw new Error(`tsc: ${error.stdout.slice(0, 2000)}`);
      });
      // and refuses a payload whose field has the wrong type
      await writeFile(file, `${described.types.typescript}\nexport const bad: GithubPush = ${JSON.stringify({ ...payloads[0]!, ref: 42 })};\n`);
      await expect(run(process.execPath, [tsc, '--strict', '--noEmit', '--target', 'es2022', '--typeRoots', dir, file])).rejects.toMatchObject({ stdout: expect.stringMatching(/error TS2322: Type 'number' is not assignable to type 'string'/) });

      // The zod schema: imports only zod, parses every stored payload, refuses a wrong type.
      expect(described.types.zod.match(/^import .*$/gm)).toEqual(["import { z } from 'zod';"]);
      const module = join(dir, 'push.mjs');
      await writeFile(module, described.types.zod.replace("from 'zod'", `from ${JSON.stringify(pathToFileURL(require.resolve('zod')).href)}`));
      const { GithubPushSchema } = (await import(pathToFileURL(module).href)) as { GithubPushSchema: { safeParse(value: unknown): { success: boolean } } };
      for (const payload of payloads) expect(GithubPushSchema.safeParse(payload).success).toBe(true);
      expect(GithubPushSchema.safeParse({ ...payloads[0]!, ref: 42 }).success).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('skips payloads that are not JSON (and says so), keeps a 25 MB payload and odd keys without losing an event', async () => {
    const form = await t.deliver('/webhooks/hooks', 'a=1&b=2', { 'content-type': 'application/x-www-form-urlencoded', 'x-event-type': 'form' });
    expect(form.status).toBe(200);
    const big = `{"big":"${'x'.repeat(25 * 1024 * 1024 - 20)}"}`;
    const large = await t.deliver('/webhooks/hooks', big, { 'content-type': 'application/json' });
    expect(large.status).toBe(200);
    const odd = await t.deliver('/webhooks/hooks', '{"a.b":1,"__proto__":{"x":1},"n\\u0000":[1,"a",null,{"k":true}]}', { 'content-type': 'application/json' });
    expect(odd.status).toBe(200);
    await t.sb.shapes.tracker.catchUp();
    const types = (await api('listEventTypes', { provider: 'hooks' })).body.types as { event_type: string; skipped_not_json: number; skipped_too_large: number; events_seen: number }[];
    expect(types.length).toBeGreaterThan(0);
    expect(types.reduce((sum, type) => sum + type.skipped_not_json, 0) + types.reduce((sum, type) => sum + type.skipped_too_large, 0)).toBeGreaterThanOrEqual(1);
    for (const id of [form.json.id, large.json.id, odd.json.id]) expect((await api('getEvent', { id })).status).toBe(200);
  }, 120_000);

  it('resets a type: its shape is inferred again from the next events', async () => {
    expect((await api('resetEventType', { provider: 'github', event_type: 'push' })).body).toEqual({ reset: 1 });
    expect((await api('describeEventType', { provider: 'github', event_type: 'push' })).status).toBe(404);
    await deliver(push());
    await t.sb.shapes.tracker.catchUp();
    expect((await api('describeEventType', { provider: 'github', event_type: 'push' })).body.events_seen).toBe(1);
  }, 60_000);

  it('generates a type once while its events keep the same shape: only the banner count moves', async () => {
    const type = 'generated.once';
    const order = (n: number) => ({ order: { id: n, total: n * 10, note: `n${n}` } });
    const deliverOpen = async (payload: unknown) =>
      expect((await t.deliver(`/webhooks/hooks`, JSON.stringify({ type, ...(payload as object) }), { 'content-type': 'application/json' })).status).toBe(200);
    for (let i = 0; i < 3; i++) await deliverOpen(order(i));
    await t.sb.shapes.tracker.catchUp();
    const first = await t.sb.shapes.describe('hooks', type);
    expect(first.types.typescript).toContain('from 3 stored events');
    await deliverOpen(order(3));
    await t.sb.shapes.tracker.catchUp();
    const second = await t.sb.shapes.describe('hooks', type);
    expect(second.events_seen).toBe(4);
    expect(second.types.typescript).toContain('from 4 stored events');
    expect(second.types.typescript.replace('from 4', 'from 3')).toBe(first.types.typescript);
    // The same generation, not a new one: the schema object itself is the cached one.
    expect(second.types.json_schema).toBe(first.types.json_schema);
    // A new field is a new shape: generated again, with it.
    await deliverOpen({ ...order(4), coupon: 'SAVE' });
    await t.sb.shapes.tracker.catchUp();
    const third = await t.sb.shapes.describe('hooks', type);
    expect(third.types.json_schema).not.toBe(first.types.json_schema);
    expect(third.types.typescript).toMatch(/coupon\?: string/);
  }, 60_000);
});
