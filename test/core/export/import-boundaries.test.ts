import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../../src/core/store/cursor.js';
import { runCli } from '../../helpers/cli.js';
import { startTestSwitchboard, TEST_TOKEN, type TestSwitchboard } from '../../helpers/core.js';
import { connectMcp } from '../../helpers/mcp.js';

/**
 * Issue #22.8–10 and the import parts of #22.16: what an import file or an export filter can
 * hold at its edges — big events, times at the ends of the calendar, repeated lines, long ids,
 * old events — each through the real control API of a running switchboard.
 */

const require = createRequire(import.meta.url);
const harValidator = require('har-validator') as { har(data: unknown): Promise<unknown> };

const MAX_BODY = 6 * 1024 * 1024;
let t: TestSwitchboard;

beforeAll(async () => {
  t = await startTestSwitchboard({ providers: [{ name: 'homelab', kind: 'open' }], receiver: { max_body_bytes: MAX_BODY }, retention: { max_age_days: 30 } });
});
afterAll(async () => {
  await t?.close();
});

const auth = { authorization: `Bearer ${TEST_TOKEN}` };
let seq = 0;

/** An export line as `switchboard export` writes it (the fields import reads). */
function line(fields: Record<string, unknown> = {}): string {
  seq++;
  return JSON.stringify({
    provider: 'homelab',
    family: 'webhook',
    event_type: 'ping',
    external_id: `ext-${seq}`,
    trust_mode: 'open',
    verified: false,
    received_at: `2026-11-${String((seq % 28) + 1).padStart(2, '0')}T10:00:00.123456Z`,
    verify_detail: null,
    content_type: 'application/json',
    source_ip: '127.0.0.1',
    headers: {},
    payload_base64: Buffer.from(`{"n":${seq}}`).toString('base64'),
    ...fields,
  });
}

async function importBody(ndjson: string): Promise<any> {
  const response = await fetch(`${t.sb.url.control}/api/import`, { method: 'POST', headers: { ...auth, 'content-type': 'application/x-ndjson' }, body: ndjson });
  expect(response.status).toBe(200);
  return response.json();
}

async function exportText(query: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${t.sb.url.control}/api/export${query}`, { headers: auth });
  return { status: response.status, text: await response.text() };
}

describe('#22.8 big events', () => {
  it('imports an event of max_body_bytes (past the 3,355,428 bytes a base64 regex broke at) and round-trips it', async () => {
    const big = Buffer.alloc(MAX_BODY, 0x61);
    big[0] = 0x7b; // any bytes
    const before = Array.from({ length: 3 }, () => line({ provider: 'bigones' }));
    const result = await importBody(
      [...before, line({ provider: 'bigones', external_id: 'big-1', payload_base64: big.toString('base64') }), line({ provider: 'bigones' })].join('\n'),
    );
    expect(result).toMatchObject({ imported: 5, duplicates: 0, errors: [], error_count: 0 });
    const exported = (await exportText('?provider=bigones')).text.split('\n').filter(Boolean).map((text) => JSON.parse(text));
    const back = exported.find((event) => event.external_id === 'big-1');
    expect(Buffer.from(back.payload_base64, 'base64').equals(big)).toBe(true);
  });

  it('reports a line it cannot read with its number, and imports the others', async () => {
    const result = await importBody([line({ provider: 'perline' }), line({ provider: 'perline', payload_base64: `${'QUJD'.repeat(1_000_000)}!` }), line({ provider: 'perline' })].join('\n'));
    expect(result.imported).toBe(2);
    expect(result.errors).toEqual([{ line: 2, message: expect.stringMatching(/payload_base64/) }]);
  });
});

describe('#22.9 one time rule', () => {
  it('refuses, per line, a received_at outside the years 1–9999 in UTC, and keeps the microseconds of an offset time', async () => {
    const result = await importBody(
      [
        line({ provider: 'times', received_at: '9999-12-31T23:00:00-05:00' }),
        line({ provider: 'times', received_at: '0000-06-01T00:00:00Z' }),
        line({ provider: 'times', received_at: '0001-01-01T00:30:00+01:00' }),
        line({ provider: 'times', received_at: '2026-11-30T10:00:00.1234567Z' }),
        line({ provider: 'times', external_id: 'first', received_at: '0001-01-01T00:00:00Z' }),
        line({ provider: 'times', external_id: 'last', received_at: '9999-12-31T23:59:59.999999Z' }),
        line({ provider: 'times', external_id: 'offset', received_at: '2026-11-30T10:00:00.123456+02:00' }),
      ].join('\n'),
    );
    expect(result.imported).toBe(3);
    expect(result.errors.map((error: { line: number }) => error.line)).toEqual([1, 2, 3, 4]);
    expect(result.errors[0].message).toMatch(/received_at.*year 10000 in UTC/);
    expect(result.errors[3].message).toMatch(/received_at.*7 fractional digits/);
    const stored = await t.sb.store.listEvents({ provider: 'times', limit: 10 });
    expect(Object.fromEntries(stored.items.map((event) => [event.external_id, event.received_at]))).toEqual({
      first: '0001-01-01T00:00:00.000000Z',
      last: '9999-12-31T23:59:59.999999Z',
      offset: '2026-11-30T08:00:00.123456Z',
    });
  });

  it('pages through the ends of the calendar with the cursors it issues, and exports them as valid HAR', async () => {
    const first = await t.sb.store.listEvents({ provider: 'times', limit: 1 });
    const ids = [first.items[0]!.external_id];
    let cursor = first.next_cursor;
    while (cursor) {
      const page = await t.sb.store.listEvents({ provider: 'times', limit: 1, cursor });
      ids.push(...page.items.map((event) => event.external_id));
      cursor = page.next_cursor;
    }
    expect(ids).toEqual(['last', 'offset', 'first']);
    const har = await exportText('?provider=times&format=har');
    expect(har.status).toBe(200);
    await expect(harValidator.har(JSON.parse(har.text))).resolves.toBeTruthy();
  });

  it('refuses a cursor or a filter outside the rule with invalid_argument', async () => {
    expect(() => decodeCursor(encodeCursor({ received_at: '0000-12-31T23:59:59.000000Z', id: 1 }))).toThrow(/cursor/);
    expect(decodeCursor(encodeCursor({ received_at: '0001-01-01T00:00:00.000000Z', id: 1 })).id).toBe(1);
    // The store's own filter check (under every face), and MCP's schema.
    await expect(t.sb.store.exportBatch({ since: '9999-12-31T23:00:00-05:00' }, null, { rows: 1, bytes: 1 })).rejects.toMatchObject({ code: 'invalid_argument' });
    const mcp = await connectMcp(t);
    try {
      for (const since of ['0000-01-01', '2026-11-30T10:00:00.1234567Z', '9999-12-31T23:00:00-05:00']) {
        const result = await mcp.client.callTool({ name: 'list_webhook_events', arguments: { since } });
        expect(result.isError, since).toBe(true);
      }
      expect((await mcp.ok('list_webhook_events', { since: '0001-01-01' })).events.length).toBeGreaterThan(0);
    } finally {
      await mcp.close();
    }
  });
});

describe('#22.10 export validates its filter before the first byte', () => {
  it('answers 400 JSON for since=0000-01-01, search=%%, seven fractional digits and year 10000', async () => {
    for (const query of ['?since=0000-01-01', '?search=%25%25', '?since=2026-11-30T10:00:00.1234567Z', '?until=9999-12-31T23:00:00-05:00', '?format=har&search=%25%25']) {
      const response = await exportText(query);
      expect(response.status, query).toBe(400);
      expect(JSON.parse(response.text).error.code, query).toBe('invalid_argument');
    }
  });

  it('the CLI reports it and exits 1', async () => {
    for (const args of [['--since', '0000-01-01'], ['--search', '%%']]) {
      const run = await runCli(['export', ...args, '--control-url', t.sb.url.control, '--token', TEST_TOKEN]);
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr).not.toMatch(/no switchboard is answering/);
      expect(run.stderr).toMatch(args[0] === '--since' ? /since/ : /search/);
    }
  });
});

describe('#22.16 import dedupe and retention', () => {
  it('stores two identical id-less lines of one file once, and says so', async () => {
    const same = line({ provider: 'twins', external_id: null });
    const result = await importBody([same, same, line({ provider: 'twins', external_id: null })].join('\n'));
    expect(result).toMatchObject({ imported: 2, duplicates: 1, error_count: 0 });
    expect(result.warnings).toEqual([expect.stringMatching(/^1 line repeated an earlier line of this file/)]);
    expect((await t.sb.store.listEvents({ provider: 'twins', limit: 10 })).items).toHaveLength(2);
    // A second import of the same lines adds nothing.
    expect(await importBody([same, same].join('\n'))).toMatchObject({ imported: 0, duplicates: 2 });
  });

  it('switchboard import prints the warnings as notes', async () => {
    const same = line({ provider: 'clinotes', external_id: null });
    const file = join(t.dataDir, 'twins.ndjson');
    await writeFile(file, `${same}\n${same}\n`);
    const run = await runCli(['import', file, '--control-url', t.sb.url.control, '--token', TEST_TOKEN]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/imported 1 event, 1 already stored/);
    expect(run.stderr).toMatch(/note: 1 line repeated an earlier line of this file/);
  });

  it('compares external ids as stored (cut to 512 characters), and says so', async () => {
    const long = 'x'.repeat(600);
    const result = await importBody([line({ provider: 'longids', external_id: `${long}A` }), line({ provider: 'longids', external_id: `${long}B` })].join('\n'));
    expect(result).toMatchObject({ imported: 1, duplicates: 1, error_count: 0 });
    expect(result.warnings.join('\n')).toMatch(/2 lines have external_ids longer than 512 characters: stored cut to 512/);
    const stored = await t.sb.store.listEvents({ provider: 'longids', limit: 10 });
    expect(stored.items[0]!.external_id).toHaveLength(512);
  });

  it('says how many imported events retention will remove (older than max_age_days)', async () => {
    const old = new Date(Date.now() - 40 * 86_400_000).toISOString().replace('Z', '000Z');
    const fresh = new Date(Date.now() - 86_400_000).toISOString().replace('Z', '000Z');
    const result = await importBody([line({ provider: 'aged', received_at: old }), line({ provider: 'aged', received_at: old }), line({ provider: 'aged', received_at: fresh })].join('\n'));
    expect(result).toMatchObject({ imported: 3, error_count: 0 });
    expect(result.warnings).toEqual([expect.stringMatching(/^2 imported events are older than retention\.max_age_days \(30 days\): retention removes them within a minute/)]);
  });
});
