import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventSummary } from '../../src/shared/events.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { startTestSwitchboard, type TestSwitchboard } from '../helpers/core.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let a: TestSwitchboard | undefined;
let b: TestSwitchboard | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
  if (!db) return;
  const config = {
    providers: [
      { name: 'homelab', kind: 'open' as const },
      { name: 'gitlab', kind: 'gitlab' as const, secrets: [{ value: 'gitlab-token-0123456789' }] },
    ],
  };
  a = await startTestSwitchboard(config, { databaseUrl: db.url });
  b = await startTestSwitchboard(config, { databaseUrl: db.url });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await db?.drop();
});

it('two instances on one PostgreSQL share the event log and see each other live', async (context) => {
  if (!a || !b) return context.skip();
  const seenByB = new Promise<EventSummary>((resolve) => b!.sb.bus.once('event', resolve));
  const seenByA: EventSummary[] = [];
  a.sb.bus.on('event', (event) => seenByA.push(event));
  const answer = await a.deliver('/webhooks/homelab', '{"from":"a"}');
  expect(answer.status).toBe(200);
  const event = await seenByB;
  expect(event).toMatchObject({ id: answer.json.id, provider: 'homelab', trust_mode: 'open' });
  expect(seenByA.map((e) => e.id)).toEqual([answer.json.id]); // its own event once, not echoed back
  expect(await b.sb.store.getEvent(answer.json.id)).not.toBeNull();
});

it('a redelivery reaching the other instance is still a duplicate', async (context) => {
  if (!a || !b) return context.skip();
  const headers = { 'x-gitlab-token': 'gitlab-token-0123456789', 'x-gitlab-event': 'Push Hook', 'x-gitlab-event-uuid': 'uuid-team-1' };
  const first = await a.deliver('/webhooks/gitlab', '{"object_kind":"push"}', headers);
  const second = await b.deliver('/webhooks/gitlab', '{"object_kind":"push"}', headers);
  expect(first.json).toMatchObject({ duplicate: false });
  expect(second.json).toEqual({ id: first.json.id, duplicate: true });
});
