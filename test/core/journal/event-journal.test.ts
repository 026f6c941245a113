import { sign } from '@octokit/webhooks-methods';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventSummary } from '../../../src/shared/events.js';
import { EventJournal, type JournalTarget } from '../../../src/core/journal/event-journal.js';
import { JournalKey } from '../../../src/core/journal/journal-key.js';
import { encodeRecord } from '../../../src/core/journal/record.js';
import { migrationsDir } from '../../../src/core/paths.js';
import { migrate } from '../../../src/core/store/migrations.js';
import { EventStore } from '../../../src/core/store/event-store.js';
import { openPglite } from '../../../src/core/store/sql-client.js';
import { createSwitchboard } from '../../../src/core/switchboard.js';
import { newEvent } from '../../helpers/events.js';
import { journalEvent } from '../../helpers/journal.js';
import { connectMcp } from '../../helpers/mcp.js';
import { memoryLogger, startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../../helpers/core.js';

/**
 * The ingest journal (src/core/journal, DESIGN §5): acknowledged from the journal, applied in
 * batches, read-your-writes, exact dedupe across journal and database, backpressure, and
 * recovery of a torn tail — against a real switchboard, real PGlite and real files.
 */

const SECRET = 'journal-test-secret-0123456789';
const CONFIG = { providers: [{ name: 'github', kind: 'github' as const, secrets: [{ env: 'GH_SECRET' }] }] };
const ENV = { GH_SECRET: SECRET };

async function githubDelivery(receiver: string, deliveryId: string, body = JSON.stringify({ zen: 'Keep it logically awesome.', id: deliveryId })) {
  const response = await fetch(`${receiver}/webhooks/github`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', 'x-github-event': 'ping', 'x-github-delivery': deliveryId, 'x-hub-signature-256': await sign(SECRET, body) },
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: JSON.parse(text) as { id: number; duplicate: boolean; error?: string; hint?: string } };
}

describe('journal on a running switchboard', () => {
  let t: TestSwitchboard;

  beforeAll(async () => {
    t = await startTestSwitchboard(CONFIG, { env: ENV, journal: { maxLagRecords: 40, backpressureWaitMs: 200 } });
  }, 60_000);
  afterAll(() => t?.close());

  /**
   * `total` deliveries from `workers` concurrent senders, each read at once by `shows` — the two
   * reads a client makes alternate: one event (even i), the newest page (odd i). Answers the
   * delivery ids the read missed.
   */
  async function readEachRightAfterItsAnswer(
    prefix: string,
    total: number,
    workers: number,
    shows: (i: number, answer: { id: number }) => Promise<boolean>,
  ): Promise<string[]> {
    let next = 0;
    const missing: string[] = [];
    async function worker(): Promise<void> {
      while (next < total) {
        const i = next++;
        const answer = await githubDelivery(t.sb.url.receiver, `${prefix}${i}`);
        expect(answer.status).toBe(200);
        if (!(await shows(i, answer.json))) missing.push(`${prefix}${i}`);
      }
    }
    await Promise.all(Array.from({ length: workers }, worker));
    return missing;
  }

  it('shows every acknowledged delivery to a read made right after its answer (read-your-writes)', async () => {
    const missing = await readEachRightAfterItsAnswer('ryw-', 2_000, 16, async (i, answer) => {
      if (i % 2 === 0) return (await t.sb.api.getEvent({ id: answer.id })).event.external_id === `ryw-${i}`;
      const page = await t.sb.store.listEvents({ provider: 'github', limit: 50 });
      return page.items.some((event) => event.id === answer.id);
    });
    expect(missing).toEqual([]);
  }, 120_000);

  it('shows every acknowledged delivery to an agent reading over MCP right after its answer', async () => {
    const agent = await connectMcp(t);
    try {
      const missing = await readEachRightAfterItsAnswer('ryw-mcp-', 1_000, 8, async (i, answer) => {
        if (i % 2 === 0) return (await agent.ok('get_webhook_event', { id: answer.id, max_payload_bytes: 0 })).external_id === `ryw-mcp-${i}`;
        const page = await agent.ok<{ events: { id: number }[] }>('list_webhook_events', { provider: 'github', limit: 20 });
        return page.events.some((event) => event.id === answer.id);
      });
      expect(missing).toEqual([]);
    } finally {
      await agent.close();
    }
  }, 120_000);

  it('answers a redelivery with the first id while both are still in the journal, and after they are applied', async () => {
    const journal = t.sb.journal!;
    journal.pauseApplier();
    try {
      const first = await githubDelivery(t.sb.url.receiver, 'dup-journal');
      const again = await Promise.all([1, 2, 3].map(() => githubDelivery(t.sb.url.receiver, 'dup-journal')));
      expect(first.json).toEqual({ id: expect.any(Number), duplicate: false });
      for (const answer of again) expect(answer.json).toEqual({ id: first.json.id, duplicate: true });
      expect(journal.stats.appliedId).toBeLessThan(first.json.id);
    } finally {
      journal.resumeApplier();
    }
    const applied = await githubDelivery(t.sb.url.receiver, 'dup-journal');
    expect(applied.json.duplicate).toBe(true);
    const page = await t.sb.store.listEvents({ external_id: 'dup-journal', limit: 10 });
    expect(page.items).toHaveLength(1);
  });

  it('keeps a read waiting through database maintenance (VACUUM) instead of failing it as a stuck database', async () => {
    const m = await startTestSwitchboard(CONFIG, { env: ENV, journal: { barrierTimeoutMs: 150 } });
    try {
      const journal = m.sb.journal!;
      journal.pauseApplier();
      const answer = await githubDelivery(m.sb.url.receiver, 'during-maintenance');
      expect(answer.status).toBe(200);
      // A read behind an applier that does not move fails after the wait, with why.
      await expect(m.sb.store.getEvent(answer.json.id)).rejects.toThrow(/not catching up/);
      // Behind maintenance it waits as long as that takes (here: several of those waits).
      let release = () => {};
      const held = journal.maintenance(() => new Promise<void>((resolve) => (release = resolve)));
      const read = m.sb.store.getEvent(answer.json.id);
      await new Promise((resolve) => setTimeout(resolve, 600));
      journal.resumeApplier();
      release();
      await held;
      expect(await read).toMatchObject({ id: answer.json.id, external_id: 'during-maintenance' });
    } finally {
      await m.close();
    }
  });

  it('answers redeliveries of recently stored events from memory, until events are deleted', async () => {
    const m = await startTestSwitchboard(CONFIG, { env: ENV });
    try {
      const journal = m.sb.journal!;
      const first = await githubDelivery(m.sb.url.receiver, 'remembered');
      await m.sb.store.getEvent(first.json.id); // applied
      const lookups = journal.stats.keyLookups;
      const storm = await Promise.all(Array.from({ length: 50 }, () => githubDelivery(m.sb.url.receiver, 'remembered')));
      for (const answer of storm) expect(answer.json).toEqual({ id: first.json.id, duplicate: true });
      expect(journal.stats.keyLookups).toBe(lookups);

      // Once its first copy is deleted, a redelivery is a new event again: by retention…
      const other = await githubDelivery(m.sb.url.receiver, 'newer');
      await m.sb.store.getEvent(other.json.id);
      expect((await m.sb.store.applyRetention({ max_age_days: 30, max_rows: 1, max_rejections: 10 })).events).toBe(1);
      const again = await githubDelivery(m.sb.url.receiver, 'remembered');
      expect(again.json).toEqual({ id: expect.any(Number), duplicate: false });
      expect(again.json.id).toBeGreaterThan(other.json.id);
      expect((await githubDelivery(m.sb.url.receiver, 'remembered')).json).toEqual({ id: again.json.id, duplicate: true });
      // …or by clearing the log.
      await m.sb.store.clearEvents();
      expect((await githubDelivery(m.sb.url.receiver, 'newer')).json.duplicate).toBe(false);
    } finally {
      await m.close();
    }
  });

  it('drops only a row the database refuses, says so in the log, and goes on applying', async () => {
    const journal = t.sb.journal!;
    journal.pauseApplier();
    const submitted = [];
    try {
      for (let i = 0; i < 9; i++) {
        // storableEvent() keeps such text from the journal; this one skips it, as a bug of ours would.
        const verify_detail = i === 4 ? 'a NUL \u0000 Postgres text cannot hold' : null;
        submitted.push(await journal.submit({ ...newEvent({ provider: 'github', external_id: `isolate-${i}`, verify_detail }), origin: 'provider' }));
      }
    } finally {
      journal.resumeApplier();
    }
    expect(await Promise.all(submitted.map((insert) => insert.visible))).toEqual([true, true, true, true, false, true, true, true, true]);
    const bad = submitted[4]!.event.id;
    expect(t.logger.lines.join('\n')).toMatch(new RegExp(`journal: event ${bad} \\(github\\) could not be stored and was dropped: .*0x00`));
    const stored = await Promise.all(submitted.map((insert) => t.sb.store.getEvent(insert.event.id)));
    expect(stored.map((event) => event?.external_id ?? null)).toEqual([0, 1, 2, 3, null, 5, 6, 7, 8].map((i) => (i === null ? null : `isolate-${i}`)));
    const after = await githubDelivery(t.sb.url.receiver, 'after-isolate');
    expect(after.status).toBe(200);
    expect(await t.sb.store.getEvent(after.json.id)).toMatchObject({ external_id: 'after-isolate' });
  });

  it('announces an event on the bus only once a read can find it, with its final id', async () => {
    const journal = t.sb.journal!;
    const seen: { event: EventSummary; found: boolean }[] = [];
    const listener = (event: EventSummary) => {
      void t.sb.store.getEvent(event.id).then((found) => seen.push({ event, found: found !== null }));
    };
    t.sb.bus.on('event', listener);
    journal.pauseApplier();
    let answer;
    try {
      answer = await githubDelivery(t.sb.url.receiver, 'bus-visible');
      expect(answer.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(seen).toEqual([]);
    } finally {
      journal.resumeApplier();
    }
    await expect.poll(() => seen.length).toBe(1);
    expect(seen[0]).toEqual({ event: expect.objectContaining({ id: answer.json.id, external_id: 'bus-visible' }), found: true });
    t.sb.bus.off('event', listener);
  });

  it('refuses deliveries with 503 and Retry-After while the database is too far behind, and stores none of them', async () => {
    const journal = t.sb.journal!;
    journal.pauseApplier();
    const answers: Awaited<ReturnType<typeof githubDelivery>>[] = [];
    try {
      for (let i = 0; i < 50; i++) answers.push(await githubDelivery(t.sb.url.receiver, `full-${i}`));
    } finally {
      journal.resumeApplier();
    }
    const refused = answers.filter((answer) => answer.status === 503);
    const accepted = answers.filter((answer) => answer.status === 200);
    expect(accepted.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of refused) {
      expect(answer.headers.get('retry-after')).toBe('1');
      expect(answer.json.error).toBe('storage_busy');
      expect(answer.json.hint).toMatch(/retry/);
    }
    // Once it caught up, the refused ones can be delivered again; each is stored exactly once.
    const retried = await Promise.all(refused.map((_, k) => githubDelivery(t.sb.url.receiver, `full-${answers.indexOf(refused[k]!)}`)));
    for (const answer of retried) expect(answer.json.duplicate).toBe(false);
    const page = await t.sb.store.listEvents({ search: 'full-', limit: 200 });
    const ids = page.items.map((event) => event.external_id).filter((id) => id?.startsWith('full-'));
    expect(new Set(ids).size).toBe(50);
    expect(ids).toHaveLength(50);
  });
});

describe('journal applier', () => {
  it('counts a batch whose answer was lost after it committed as stored, not as colliding rows', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'switchboard-journal-lost-'));
    const sql = await openPglite('memory://');
    await migrate(sql, migrationsDir());
    const store = new EventStore(sql);
    // The real store; only the first answer is lost, as when the database worker ends right after a commit.
    let loseAnswer = true;
    const target: JournalTarget = {
      applyJournalBatch: async (events, appliedId) => {
        await store.journalSide.applyJournalBatch(events, appliedId);
        if (loseAnswer && events.length > 0) {
          loseAnswer = false;
          throw new Error('the database worker ended (exit code 1)');
        }
      },
      journalPosition: () => store.journalSide.journalPosition(),
      eventsByKeys: (keys) => store.journalSide.eventsByKeys(keys),
      eventKeysAfter: (after, limit) => store.journalSide.eventKeysAfter(after, limit),
      estimatedEventCount: () => store.journalSide.estimatedEventCount(),
    };
    const logger = memoryLogger();
    const journal = await EventJournal.open(dataDir, target, logger);
    try {
      const inserts = await Promise.all([0, 1, 2, 3, 4].map((i) => journal.submit({ ...newEvent({ provider: 'github', external_id: `lost-${i}` }), origin: 'provider' })));
      expect(await Promise.all(inserts.map((insert) => insert.visible))).toEqual([true, true, true, true, true]);
      expect(logger.lines.join('\n')).toMatch(/retrying/);
      expect(logger.lines.join('\n')).not.toMatch(/dropped/);
      expect(await sql.query('SELECT count(*)::int AS n FROM events')).toEqual([{ n: 5 }]);
    } finally {
      await journal.close();
      await sql.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('journal files', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'switchboard-journal-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  const open = async () => {
    const logger = memoryLogger();
    const sb = createSwitchboard({ dataDir, config: { ...CONFIG, receiver: { port: 0 }, control: { port: 0 } }, env: ENV, token: TEST_TOKEN, logger, rendererDir: null });
    await sb.start();
    return { sb, logger };
  };

  it('applies the unapplied tail at start, skips a torn last record, and dedupes against both afterwards', async () => {
    const { sb } = await open();
    const stored = await githubDelivery(sb.url.receiver, 'before-stop');
    await sb.stop();
    // A clean stop leaves nothing to apply: every segment is deleted once applied.
    expect((await readdir(join(dataDir, 'journal'))).filter((name) => name.endsWith('.log'))).toEqual([]);

    // What a crash leaves: 20 acknowledged records the applier had not reached, then the 21st
    // cut off in the middle of its write.
    const first = stored.json.id + 1;
    const key = await JournalKey.load(join(dataDir, 'journal'));
    const record = (id: number, externalId: string) =>
      encodeRecord({
        id, received_at: `2026-12-01T10:00:00.${String(id).padStart(6, '0')}Z`, provider: 'github', family: 'webhook', event_type: 'ping',
        external_id: externalId, trust_mode: 'signed', verified: true, verify_detail: 'github: X-Hub-Signature-256 verified', content_type: 'application/json',
        headers: { 'x-github-delivery': externalId }, source_ip: '127.0.0.1', origin: 'provider', payload: Buffer.from(JSON.stringify({ n: id })),
      }, key);
    const tail = Array.from({ length: 20 }, (_, i) => record(first + i, `tail-${i}`));
    const torn = record(first + 20, 'torn');
    await writeFile(join(dataDir, 'journal', `${String(first).padStart(16, '0')}.log`), Buffer.concat([...tail, torn.subarray(0, torn.byteLength - 7)]));

    const { sb: again, logger } = await open();
    try {
      const log = logger.lines.join('\n');
      expect(log).toMatch(/journal: applying 20 events received before the last stop/);
      expect(log).toMatch(/not completely written .*skipped/);
      for (let i = 0; i < 20; i++) {
        const event = await again.store.getEvent(first + i);
        expect(event).toMatchObject({ external_id: `tail-${i}`, received_at: `2026-12-01T10:00:00.${String(first + i).padStart(6, '0')}Z` });
        expect(Buffer.from(event!.payload).toString()).toBe(JSON.stringify({ n: first + i }));
      }
      expect(await again.store.listEvents({ external_id: 'torn', limit: 5 })).toEqual({ items: [] });
      // Redeliveries are duplicates of the first id, whether it came through the journal or not.
      expect((await githubDelivery(again.url.receiver, 'before-stop')).json).toEqual({ id: stored.json.id, duplicate: true });
      expect((await githubDelivery(again.url.receiver, 'tail-3')).json).toEqual({ id: first + 3, duplicate: true });
      // The torn record's delivery was never acknowledged: the provider's retry is stored anew.
      const retried = await githubDelivery(again.url.receiver, 'torn');
      expect(retried.json).toEqual({ id: first + 20, duplicate: false });
    } finally {
      await again.stop();
    }
    const reopened = await open();
    try {
      expect(reopened.logger.lines.join('\n')).not.toMatch(/journal: applying/);
      expect(await reopened.sb.store.latestEventId()).toBe(first + 20);
    } finally {
      await reopened.sb.stop();
    }
  }, 120_000);

  it('saves the redelivery filter at a clean stop and, next start, adds the keys stored since (or rebuilds a damaged one)', async () => {
    const { sb } = await open();
    const before = await githubDelivery(sb.url.receiver, 'filter-before');
    await sb.stop();
    const filterFile = join(dataDir, 'journal', 'keys.bloom');
    expect((await stat(filterFile)).mode & 0o077).toBe(0);

    // Stored behind the saved filter's back (as an older version, or an import, would).
    const sql = await openPglite(dataDir);
    const direct = new EventStore(sql);
    const sneaked = await direct.insertEvent({ ...newEvent({ provider: 'github', external_id: 'filter-after' }) });
    await direct.close();

    for (const damage of [false, true]) {
      if (damage) {
        const bytes = await readFile(filterFile);
        bytes.writeUInt8(bytes.readUInt8(bytes.byteLength - 1) ^ 0xff, bytes.byteLength - 1);
        await writeFile(filterFile, bytes);
      }
      const { sb: again } = await open();
      try {
        // While the filter loads and after (from the file plus the newer keys, or from scratch),
        // redeliveries of both are duplicates.
        expect((await githubDelivery(again.url.receiver, 'filter-after')).json).toEqual({ id: sneaked.event.id, duplicate: true });
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect((await githubDelivery(again.url.receiver, 'filter-after')).json).toEqual({ id: sneaked.event.id, duplicate: true });
        expect((await githubDelivery(again.url.receiver, 'filter-before')).json).toEqual({ id: before.json.id, duplicate: true });
        const fresh = await githubDelivery(again.url.receiver, `filter-new-${damage}`);
        expect(fresh.json.duplicate).toBe(false);
        await again.journal!.filterLoaded();
        expect(again.journal!.filterSource).toBe(damage ? 'database' : 'file');
      } finally {
        await again.stop();
      }
    }
  }, 120_000);

  it('starts again after a crash with a current segment of 130,000 records, one of them damaged, and says what that cost (issue #22)', async () => {
    const { sb } = await open();
    const newest = (await githubDelivery(sb.url.receiver, 'before-the-big-one')).json.id;
    await sb.stop();
    // What 130,000 small deliveries leave when the process is killed: one segment holding them
    // all, most already applied (the position below), the last 30 not yet — one of which a
    // flipped byte damaged, as is one already applied.
    const COUNT = 130_000;
    const first = newest + 1;
    const records: Buffer[] = [];
    const key = await JournalKey.load(join(dataDir, 'journal'));
    for (let i = 0; i < COUNT; i++) {
      const id = first + i;
      records.push(encodeRecord({ ...journalEvent(id, { external_id: `big-${i}`, headers: {}, payload: Buffer.from(`{"n":${i}}`) }) }, key));
    }
    for (const i of [COUNT - 50_000, COUNT - 10]) {
      const damaged = Buffer.from(records[i]!);
      damaged.writeUInt8(damaged.readUInt8(damaged.byteLength - 1) ^ 0x04, damaged.byteLength - 1);
      records[i] = damaged;
    }
    await writeFile(join(dataDir, 'journal', `${String(first).padStart(16, '0')}.log`), Buffer.concat(records));
    const appliedThrough = first + COUNT - 31;
    const sql = await openPglite(dataDir);
    await sql.exec(`UPDATE journal_state SET applied_id = ${appliedThrough}`);
    await sql.close();

    const { sb: again, logger } = await open();
    try {
      const log = logger.lines.join('\n');
      expect(log).toMatch(/journal: applying 29 events received before the last stop/);
      expect(log).toContain(`they held #${first + COUNT - 50_000}, already in the database: nothing lost`);
      expect(log).toContain(`they held event #${first + COUNT - 10}, acknowledged but not yet in the database: lost (1 event)`);
      expect(log).not.toMatch(/never acknowledged/);
      expect(await again.store.getEvent(first + COUNT - 11)).toMatchObject({ external_id: `big-${COUNT - 11}` });
      expect(await again.store.getEvent(first + COUNT - 10)).toBeNull();
      expect(await again.store.getEvent(first + COUNT - 1)).toMatchObject({ external_id: `big-${COUNT - 1}` });
      // Ids go on after the journal's last record.
      expect((await githubDelivery(again.url.receiver, 'after-the-big-one')).json).toEqual({ id: first + COUNT, duplicate: false });
    } finally {
      await again.stop();
    }
  }, 120_000);

  it('keeps its files private to the account', async () => {
    const { sb } = await open();
    try {
      sb.journal!.pauseApplier();
      await githubDelivery(sb.url.receiver, 'private');
      const dir = join(dataDir, 'journal');
      expect((await stat(dir)).mode & 0o077).toBe(0);
      for (const name of await readdir(dir)) expect((await stat(join(dir, name))).mode & 0o077).toBe(0);
      // The secret never reaches the journal (headers are redacted before anything is written).
      for (const name of await readdir(dir)) expect((await readFile(join(dir, name))).includes(SECRET)).toBe(false);
    } finally {
      sb.journal!.resumeApplier();
      await sb.stop();
    }
  }, 60_000);
});
