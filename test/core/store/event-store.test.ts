import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsDir } from '../../../src/core/paths.js';
import { EventStore } from '../../../src/core/store/event-store.js';
import { migrate } from '../../../src/core/store/migrations.js';
import type { SqlClient } from '../../../src/core/store/sql-client.js';
import { newEvent } from '../../helpers/events.js';
import { PGLITE, PGLITE_IN_WORKER, POSTGRESQL } from '../../helpers/database-backends.js';

describe.each([PGLITE, PGLITE_IN_WORKER, POSTGRESQL])('event store on $name', (backend) => {
  let store: EventStore;
  let client: SqlClient;
  let cleanup = async () => {};
  let available = true;

  beforeAll(async () => {
    const opened = await backend.open();
    if (!opened) {
      available = false;
      return;
    }
    client = opened.client;
    cleanup = opened.cleanup;
    expect(await migrate(client, migrationsDir())).toEqual(['0001_init', '0002_origin_and_replay_detail', '0003_search_and_scale', '0004_journal', '0005_search_off_the_write_path', '0006_search_text_lowercased', '0007_search_text_utf8', '0008_suites', '0009_delivery_lab', '0010_shapes', '0011_suite_chaos']);
    expect(await migrate(client, migrationsDir())).toEqual([]);
    store = new EventStore(client);
  });
  afterAll(async () => {
    if (!available) return;
    await store.close();
    await cleanup();
  });

  it('round-trips binary payloads and headers exactly', async (context) => {
    if (!available) return context.skip();
    const payload = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const { event } = await store.insertEvent(newEvent({ payload, headers: { 'x-a': 'ü «b»' } }));
    const stored = await store.getEvent(event.id);
    expect(Buffer.from(stored!.payload).equals(payload)).toBe(true);
    expect(stored!.headers).toEqual({ 'x-a': 'ü «b»' });
    expect(stored!.received_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it('group-commits a burst and pages through rows sharing one timestamp with no skip and no repeat', async (context) => {
    if (!available) return context.skip();
    // One event-loop turn → one INSERT → one transaction → one now() for all 300 rows.
    const burst = await Promise.all(Array.from({ length: 300 }, (_, i) => store.insertEvent(newEvent({ provider: 'burst', external_id: `b-${i}` }))));
    const timestamps = new Set(burst.slice(0, 256).map((result) => result.event.received_at));
    expect(timestamps.size).toBe(1);
    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await store.listEvents({ provider: 'burst', limit: 7, cursor });
      seen.push(...page.items.map((event) => event.id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(Math.ceil(300 / 7));
    expect(new Set(seen).size).toBe(300);
    expect(seen).toEqual([...burst.map((result) => result.event.id)].sort((a, b) => b - a));
  });

  it('omits next_cursor on the last page and refuses a forged cursor', async (context) => {
    if (!available) return context.skip();
    const page = await store.listEvents({ provider: 'burst', limit: 300 });
    expect(page.items).toHaveLength(300);
    expect(page.next_cursor).toBeUndefined();
    await expect(store.listEvents({ limit: 5, cursor: 'not-a-cursor' })).rejects.toMatchObject({ code: 'invalid_argument' });
    const forged = Buffer.from(JSON.stringify(["2026-01-01'; DROP TABLE events;--", 1])).toString('base64url');
    await expect(store.listEvents({ limit: 5, cursor: forged })).rejects.toMatchObject({ code: 'invalid_argument' });
  });

  it('filters by provider, type, trust mode, time, id and payload text', async (context) => {
    if (!available) return context.skip();
    const a = await store.insertEvent(newEvent({ provider: 'f', event_type: 'invoice.paid', payload: Buffer.from('{"customer":"Ada Lovelace"}') }));
    const b = await store.insertEvent(newEvent({ provider: 'f', event_type: 'push', trust_mode: 'signed', verified: true, payload: Buffer.from('{"100%_match":true}') }));
    expect((await store.listEvents({ provider: 'f', event_type: 'push', limit: 10 })).items.map((e) => e.id)).toEqual([b.event.id]);
    expect((await store.listEvents({ provider: 'f', trust_mode: 'signed', limit: 10 })).items.map((e) => e.id)).toEqual([b.event.id]);
    expect((await store.listEvents({ provider: 'f', search: 'ada love', limit: 10 })).items.map((e) => e.id)).toEqual([a.event.id]);
    expect((await store.listEvents({ provider: 'f', search: '100%_', limit: 10 })).items.map((e) => e.id)).toEqual([b.event.id]);
    await expect(store.listEvents({ provider: 'f', search: '%', limit: 10 })).rejects.toMatchObject({ code: 'invalid_argument' });
    expect((await store.listEvents({ provider: 'f', after_id: a.event.id, limit: 10 })).items.map((e) => e.id)).toEqual([b.event.id]);
    expect((await store.listEvents({ provider: 'f', since_time: a.event.received_at, limit: 10 })).items).toHaveLength(2);
    expect(await store.latestEventId()).toBe(b.event.id);
  });

  it('filters by origin, external_id and until, and refuses impossible times and unusable searches', async (context) => {
    if (!available) return context.skip();
    const a = await store.insertEvent(newEvent({ provider: 'g', external_id: 'ext-a', origin: 'test', payload: Buffer.from('{"name":"Zoë Ünal","path":"C:\\\\temp"}') }));
    // PGlite's clock ticks in milliseconds: two quick inserts can share a received_at, and
    // `until` is exclusive.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const b = await store.insertEvent(newEvent({ provider: 'g', external_id: 'ext-b', origin: 'import', event_type: 'Invoice.Paid' }));
    expect((await store.listEvents({ origin: 'test', provider: 'g', limit: 10 })).items.map((e) => e.id)).toEqual([a.event.id]);
    expect((await store.listEvents({ external_id: 'ext-b', limit: 10 })).items.map((e) => e.id)).toEqual([b.event.id]);
    expect((await store.listEvents({ provider: 'g', until_time: b.event.received_at, limit: 10 })).items.map((e) => e.id)).toEqual([a.event.id]);
    // The payload's text, case-insensitive for every letter (issue #22: never an escape encoding),
    // backslashes literal; event types too.
    expect((await store.listEvents({ provider: 'g', search: 'zoë ünal', limit: 10 })).items.map((e) => e.id)).toEqual([a.event.id]);
    expect((await store.listEvents({ provider: 'g', search: 'ZOË ÜNAL', limit: 10 })).items.map((e) => e.id)).toEqual([a.event.id]);
    expect((await store.listEvents({ provider: 'g', search: 'zoe unal', limit: 10 })).items).toHaveLength(0);
    expect((await store.listEvents({ provider: 'g', search: 'c:\\\\TEMP', limit: 10 })).items.map((e) => e.id)).toEqual([a.event.id]);
    expect((await store.listEvents({ provider: 'g', search: 'invoice.PAID', limit: 10 })).items.map((e) => e.id)).toEqual([b.event.id]);
    for (const search of ['a', 'id', '%', '_', '%%%', '"":']) {
      await expect(store.listEvents({ search, limit: 10 })).rejects.toMatchObject({ code: 'invalid_argument', message: expect.stringMatching(/3 letters or digits/) });
    }
    await expect(store.listEvents({ search: 'x'.repeat(1001), limit: 10 })).rejects.toMatchObject({ code: 'invalid_argument' });
    expect((await store.listEvents({ search: 'ab1'.repeat(333), limit: 10 })).items).toEqual([]);
    for (const time of ['2026-13-45T99:99:99Z', '2026-02-30', 'yesterday', "2026-01-01'; --"]) {
      await expect(store.listEvents({ since_time: time, limit: 10 })).rejects.toMatchObject({ code: 'invalid_argument' });
      await expect(store.listEvents({ until_time: time, limit: 10 })).rejects.toMatchObject({ code: 'invalid_argument' });
    }
    const impossible = Buffer.from(JSON.stringify(['2026-13-45T99:99:99.000000Z', 1])).toString('base64url');
    await expect(store.listEvents({ limit: 5, cursor: impossible })).rejects.toMatchObject({ code: 'invalid_argument' });
    const february30 = Buffer.from(JSON.stringify(['2026-02-30T10:00:00.000000Z', 1])).toString('base64url');
    await expect(store.listRejections({ limit: 5, cursor: february30 })).rejects.toMatchObject({ code: 'invalid_argument' });
  });

  it('applies retention: age first, then the oldest rows beyond the cap', async (context) => {
    if (!available) return context.skip();
    await store.clearEvents();
    const old = await store.insertEvent(newEvent({ provider: 'r' }));
    await client.query(`UPDATE events SET received_at = now() - interval '40 days' WHERE id = $1`, [old.event.id]);
    const kept = [];
    for (let i = 0; i < 5; i++) kept.push((await store.insertEvent(newEvent({ provider: 'r' }))).event.id);
    expect(await store.applyRetention({ max_age_days: 30, max_rows: 3, max_rejections: 100 })).toEqual({ events: 3, rejections: 0 });
    const left = (await store.listEvents({ provider: 'r', limit: 10 })).items.map((e) => e.id);
    expect(left).toEqual(kept.slice(2).reverse());
  });

  it('records rejections and replays with history newest first', async (context) => {
    if (!available) return context.skip();
    const rejection = await store.insertRejection({
      provider: 'r',
      reason: 'signature_mismatch',
      hint: 'wrong secret',
      headers: { 'x-hub-signature-256': '«redacted»' },
      body_size: 12,
      body_sha256: 'ab'.repeat(32),
      source_ip: '203.0.113.1',
    });
    expect((await store.listRejections({ provider: 'r', limit: 5 })).items[0]).toEqual(rejection);
    const { event } = await store.insertEvent(newEvent({ provider: 'r' }));
    const base = { event_id: event.id, target_url: 'http://localhost:3000/', resigned: true, response_ms: 5, response_headers: {}, error: null, requested_by: 'ui' as const };
    const first = await store.insertReplay({ ...base, delivered: true, response_status: 500, response_body: Buffer.alloc(70 * 1024, 0x61) });
    const second = await store.insertReplay({ ...base, delivered: false, response_status: null, response_body: null, error: 'ECONNREFUSED' });
    expect(first.response_body!.byteLength).toBe(64 * 1024);
    expect((await store.listReplays(event.id)).map((replay) => replay.id)).toEqual([second.id, first.id]);
  });

  it('stores odd text from any door: NUL, lone surrogates and huge values are made storable', async (context) => {
    if (!available) return context.skip();
    const { event } = await store.insertEvent(
      newEvent({
        provider: 'odd',
        event_type: 'x\u0000y\ud800',
        external_id: `id-${'z'.repeat(20_000)}`,
        verify_detail: 'ok\u0000',
        content_type: 'text/plain\udc00',
        headers: { 'x-nul': 'a\u0000b', 'x-lone\ud800': 'v\udfff', 'x-big': 'b'.repeat(100_000) },
      }),
    );
    const stored = await store.getEvent(event.id);
    expect(stored!.event_type).toBe('x\uFFFDy\uFFFD');
    expect(stored!.external_id!.length).toBeLessThanOrEqual(512);
    expect(stored!.verify_detail).toBe('ok\uFFFD');
    expect(stored!.content_type).toBe('text/plain\uFFFD');
    expect(stored!.headers['x-nul']).toBe('a\uFFFDb');
    expect(stored!.headers['x-lone\uFFFD']).toBe('v\uFFFD');
    expect(stored!.headers['x-big']!.length).toBeLessThanOrEqual(8192);
    // The capped id still deduplicates a redelivery of the same huge id.
    const again = await store.insertEvent(newEvent({ provider: 'odd', external_id: `id-${'z'.repeat(20_000)}` }));
    expect(again).toMatchObject({ duplicate: true, event: { id: event.id } });
  });

  it('fails only the row the database refuses, not the others committed with it', async (context) => {
    if (!available) return context.skip();
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) =>
        // A trust mode outside the CHECK constraint: the one refusal nothing upstream can prevent.
        store.insertEvent(newEvent({ provider: 'iso', external_id: `iso-${i}`, ...(i % 13 === 5 ? { trust_mode: 'bogus' as 'open' } : {}) })),
      ),
    );
    results.forEach((result, i) => {
      if (i % 13 === 5) expect(result).toMatchObject({ status: 'rejected', reason: { code: 'storage_unavailable' } });
      else expect(result).toMatchObject({ status: 'fulfilled', value: { duplicate: false } });
    });
    expect((await store.listEvents({ provider: 'iso', limit: 100 })).items).toHaveLength(37);
  });

  it('caps a rejection\'s stored headers and marks them truncated', async (context) => {
    if (!available) return context.skip();
    const headers = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`x-pad-${i}`, 'p'.repeat(1024)]));
    const rejection = await store.insertRejection({
      provider: 'cap',
      reason: 'signature_mismatch',
      hint: 'hint\u0000',
      headers: { 'user-agent': 'curl', ...headers },
      body_size: 1,
      body_sha256: 'ab'.repeat(32),
      source_ip: null,
    });
    expect(rejection.headers_truncated).toBe(true);
    expect(rejection.headers['user-agent']).toBe('curl');
    expect(Buffer.byteLength(JSON.stringify(rejection.headers))).toBeLessThanOrEqual(8 * 1024);
    expect(rejection.hint).toBe('hint\uFFFD');
  });

  it('reports a broken database as storage_unavailable to every waiting insert', async (context) => {
    if (!available) return context.skip();
    await client.query('ALTER TABLE events RENAME TO events_away');
    try {
      const results = await Promise.allSettled([store.insertEvent(newEvent()), store.insertEvent(newEvent())]);
      for (const result of results) {
        expect(result.status).toBe('rejected');
        expect((result as PromiseRejectedResult).reason).toMatchObject({ code: 'storage_unavailable' });
      }
    } finally {
      await client.query('ALTER TABLE events_away RENAME TO events');
    }
    await expect(store.insertEvent(newEvent())).resolves.toMatchObject({ duplicate: false });
  });
});
