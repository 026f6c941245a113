import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCopyBinary, type CopyType } from '../../../src/core/store/copy-binary.js';
import { openPgliteInWorker } from '../../../src/core/store/pglite-worker.js';
import { openPglite, type SqlClient } from '../../../src/core/store/sql-client.js';

// The journal's applier stores events by binary COPY (src/core/store/copy-binary.ts). The oracle
// is Postgres's own text input: every row goes in both ways, by COPY and by INSERT with text
// parameters, and the two tables must read back identically.

const TYPES: CopyType[] = ['int8', 'timestamptz', 'text', 'bool', 'jsonb', 'bytea', 'int4'];
const TABLE = '(id bigint PRIMARY KEY, at timestamptz, label text, flag boolean, doc jsonb, body bytea, size integer)';
const allBytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
const ROWS: unknown[][] = [
  [1, '2026-12-01T16:00:00.123456Z', 'plain', true, { a: 1 }, Buffer.from('{"ok":true}'), 11],
  [2, '2026-12-01T16:00:00Z', 'émoji 🎉 日本語 \u2028', false, { nested: { list: [1, 'two', null, true] }, 'ü': '✓' }, allBytes, 256],
  [3, '1999-12-31T23:59:59.999999Z', '', true, {}, Buffer.alloc(0), 0],
  [4, '2026-12-01T16:00:00.5Z', null, null, null, null, null],
  [5, '2500-06-30T12:00:00.000001Z', 'far future', true, [1, 2, 3], Buffer.alloc(300_000, 7), 300_000],
  [6, '1970-01-01T00:00:00.000001Z', 'epoch', false, 'a string', Buffer.from([0]), 1],
  [Number.MAX_SAFE_INTEGER, '2026-12-01T16:00:00.000100Z', 'x'.repeat(70_000), true, { big: 'y'.repeat(10_000) }, allBytes, -1],
];
const READ = `SELECT id::text, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS at, label, flag, doc::text, encode(body, 'hex') AS body, size
  FROM %s ORDER BY id`;

describe('binary COPY rows', () => {
  it('refuses a time it cannot read with the SQLSTATE Postgres would give, so the journal drops only that row', () => {
    expect(() => encodeCopyBinary(['timestamptz'], [['yesterday-ish']])).toThrow(expect.objectContaining({ code: '22007' }));
  });
});

describe.each([
  ['in this thread', (dir: string) => openPglite(dir)],
  ['in a worker thread', (dir: string) => openPgliteInWorker(dir)],
])('binary COPY into the embedded database %s', (_name, openClient) => {
  let dir: string;
  let db: SqlClient;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchboard-copy-'));
    db = await openClient(dir);
    await db.exec(`CREATE TABLE copied ${TABLE}; CREATE TABLE inserted ${TABLE}; CREATE TABLE state (n int); INSERT INTO state VALUES (0);`);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('stores every type exactly as Postgres reads the same values as text', async () => {
    await db.copyFrom!(`COPY copied FROM '/dev/blob' WITH (FORMAT binary)`, encodeCopyBinary(TYPES, ROWS), 300_000);
    for (const row of ROWS) {
      const [id, at, label, flag, doc, body, size] = row;
      await db.query('INSERT INTO inserted VALUES ($1::bigint, $2::timestamptz, $3, $4, $5::jsonb, $6::bytea, $7)', [
        String(id),
        at,
        label,
        flag,
        doc === null ? null : JSON.stringify(doc),
        body,
        size,
      ]);
    }
    const copied = await db.query(READ.replace('%s', 'copied'));
    expect(copied).toHaveLength(ROWS.length);
    expect(copied).toEqual(await db.query(READ.replace('%s', 'inserted')));
    expect(copied[0]).toMatchObject({ at: '2026-12-01T16:00:00.123456', label: 'plain', flag: true, doc: '{"a": 1}' });
    expect(copied.map((row) => row.at)).toContain('2500-06-30T12:00:00.000001');
    expect(copied.map((row) => row.at)).toContain('1999-12-31T23:59:59.999999');
  });

  it('fails a row Postgres would refuse with its SQLSTATE, and stores nothing of the transaction', async () => {
    const bad = async (row: unknown[]) =>
      db.copyFrom!(`COPY copied FROM '/dev/blob' WITH (FORMAT binary); UPDATE state SET n = n + 1`, encodeCopyBinary(TYPES, [[100, '2026-12-01T00:00:00Z', 'fine', true, {}, Buffer.alloc(1), 1], row]), 1).then(
        () => null,
        (error: { code?: string }) => error.code,
      );
    // A NUL in text, and a duplicate key: a data error (22…) and a constraint error (23…).
    expect(await bad([101, '2026-12-01T00:00:00Z', 'nul \u0000 inside', true, {}, Buffer.alloc(1), 1])).toBe('22021');
    expect(await bad([1, '2026-12-01T00:00:00Z', 'again', true, {}, Buffer.alloc(1), 1])).toBe('23505');
    expect(await db.query('SELECT count(*)::int AS n FROM copied WHERE id = 100')).toEqual([{ n: 0 }]);
    // The statements after the COPY are part of the same transaction: one failing undoes the COPY.
    await expect(
      db.copyFrom!(`COPY copied FROM '/dev/blob' WITH (FORMAT binary); UPDATE state SET n = 1 / 0`, encodeCopyBinary(TYPES, [[102, '2026-12-01T00:00:00Z', 'x', true, {}, Buffer.alloc(1), 1]]), 1),
    ).rejects.toMatchObject({ code: '22012' });
    expect(await db.query('SELECT count(*)::int AS n FROM copied WHERE id = 102')).toEqual([{ n: 0 }]);
    expect(await db.query('SELECT n FROM state')).toEqual([{ n: 0 }]);
  });
});
