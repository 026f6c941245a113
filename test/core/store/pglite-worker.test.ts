import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openPgliteInWorker, type WorkerDatabaseOptions, type WorkerSqlClient } from '../../../src/core/store/pglite-worker.js';
import { withDeadline } from '../../helpers/core.js';

// The embedded database in its worker thread replaces that worker after a statement that moved
// a large value (its WebAssembly heap never shrinks: src/core/store/pglite-worker.ts). Callers
// must not notice: nothing lost, no errors, transactions whole.

const until = async (condition: () => boolean, what: string) => {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the embedded database in a worker thread', () => {
  let dir: string;
  let db: WorkerSqlClient | undefined;
  const open = async (options: WorkerDatabaseOptions) => {
    db = await openPgliteInWorker(dir, options);
    await db.exec('CREATE TABLE IF NOT EXISTS items (id int PRIMARY KEY, body bytea)');
    return db;
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchboard-worker-recycle-'));
  });
  afterEach(async () => {
    await db?.close();
    db = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('replaces its worker after a statement with a large value, and keeps every row', async () => {
    const recycled: number[] = [];
    const client = await open({ recycleAfterValueBytes: 64 * 1024, recycleQuietMs: 50, onRecycle: ({ ms }) => recycled.push(ms) });
    const large = Buffer.alloc(100 * 1024, 7);
    await client.query('INSERT INTO items VALUES (1, $1)', [large]);
    // Large values move between the threads by transfer; the caller's own buffer stays whole.
    expect(large.byteLength).toBe(100 * 1024);
    expect(large.every((byte) => byte === 7)).toBe(true);
    await until(() => client.recycles === 1, 'the recycle');
    expect(recycled).toHaveLength(1);
    const [row] = await client.query<{ body: Uint8Array }>('SELECT body FROM items WHERE id = 1');
    expect(row!.body).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(row!.body).equals(large)).toBe(true);
    // Reading the large value back out counts too.
    await until(() => client.recycles === 2, 'the recycle after reading it');
  });

  it('does not recycle for many small values in one statement (a group commit)', async () => {
    const client = await open({ recycleAfterValueBytes: 64 * 1024, recycleQuietMs: 20 });
    const rows = Array.from({ length: 200 }, (_, i) => i);
    const values = rows.map((i) => `($${2 * i + 1}, $${2 * i + 2})`).join(', ');
    await client.query(`INSERT INTO items VALUES ${values}`, rows.flatMap((i) => [i, Buffer.alloc(1024, 1)]));
    await client.query('SELECT * FROM items');
    await sleep(300);
    expect(client.recycles).toBe(0);
  });

  it('runs the statements sent during a recycle on the new worker, all of them, none failing', async () => {
    const client = await open({});
    const recycling = client.recycle();
    const writes = Array.from({ length: 40 }, (_, i) => client.query('INSERT INTO items VALUES ($1, $2)', [i, Buffer.from([i])]));
    const reads = Array.from({ length: 10 }, () => client.query('SELECT count(*)::int AS n FROM items'));
    const transaction = client.transaction(async (tx) => {
      await tx.query('INSERT INTO items VALUES (100, NULL)');
      await tx.query('INSERT INTO items VALUES (101, NULL)');
    });
    await recycling;
    expect(client.recycles).toBe(1);
    await Promise.all([...writes, ...reads, transaction]);
    const [{ n }] = (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM items')) as [{ n: number }];
    expect(n).toBe(42);
  });

  it('never splits a transaction: a recycle asked for inside one waits for its end', async () => {
    const client = await open({});
    const order: string[] = [];
    let recycling: Promise<void> | undefined;
    await client.transaction(async (tx) => {
      await tx.query('INSERT INTO items VALUES (1, NULL)');
      recycling = client.recycle().then(() => {
        order.push('recycled');
      });
      await sleep(200);
      await tx.query('INSERT INTO items VALUES (2, NULL)');
      expect(client.recycles).toBe(0);
      order.push('committing');
    });
    await recycling;
    expect(order).toEqual(['committing', 'recycled']);
    expect(await client.query('SELECT id FROM items ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('rolls back a failed transaction whole across a pending recycle', async () => {
    const client = await open({});
    let recycling: Promise<void> | undefined;
    await expect(
      client.transaction(async (tx) => {
        await tx.query('INSERT INTO items VALUES (1, NULL)');
        recycling = client.recycle();
        await tx.query('INSERT INTO items VALUES (1, NULL)'); // duplicate key
      }),
    ).rejects.toThrow(/duplicate key/);
    await recycling;
    expect(client.recycles).toBe(1);
    expect(await client.query('SELECT id FROM items')).toEqual([]);
  });

  it('runs transactions begun at the same moment one after another, never both at once (issue #22: they deadlocked)', async () => {
    const client = await open({});
    const transactions = Array.from({ length: 8 }, (_, i) =>
      client.transaction(async (tx) => {
        await tx.query('INSERT INTO items VALUES ($1, NULL)', [i]);
        await sleep(5);
        await tx.query('UPDATE items SET body = $2 WHERE id = $1', [i, Buffer.from([i])]);
      }),
    );
    // Reads with planner settings (one statement each, no transaction across messages) and plain ones meanwhile.
    const reads = Array.from({ length: 8 }, (_, i) =>
      i % 2 ? client.query('SELECT count(*)::int AS n FROM items', [], { settings: ['enable_seqscan = off'] }) : client.query('SELECT 1 AS one'),
    );
    await withDeadline(Promise.all([...transactions, ...reads]), 'transactions begun together (deadlocked?)', 20_000);
    const rows = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM items WHERE body IS NOT NULL');
    expect(rows[0]!.n).toBe(8);
    // The settings were the statement's alone.
    expect(await client.query('SHOW enable_seqscan')).toEqual([{ enable_seqscan: 'on' }]);
  });

  it('reopens with the buffer pool asked for, runs what was sent meanwhile, and keeps the pool through a later recycle', async () => {
    const reasons: string[] = [];
    const client = await open({ recycleAfterValueBytes: 64 * 1024, recycleQuietMs: 20, onRecycle: ({ reason }) => reasons.push(reason) });
    expect(client.bufferPool).toBe('small');
    expect(await client.query('SHOW shared_buffers')).toEqual([{ shared_buffers: '16MB' }]);
    const resized = client.setBufferPool('large');
    const during = Promise.all(Array.from({ length: 10 }, (_, i) => client.query('INSERT INTO items VALUES ($1, NULL)', [i])));
    await Promise.all([resized, during]);
    expect(client.bufferPool).toBe('large');
    expect(await client.query('SHOW shared_buffers')).toEqual([{ shared_buffers: '128MB' }]);
    expect(await client.query<{ n: number }>('SELECT count(*)::int AS n FROM items')).toEqual([{ n: 10 }]);
    // A large value's recycle opens the next worker with the same pool.
    await client.query('INSERT INTO items VALUES (100, $1)', [Buffer.alloc(100 * 1024, 1)]);
    await until(() => client.recycles === 2, 'the large value’s recycle');
    expect(await client.query('SHOW shared_buffers')).toEqual([{ shared_buffers: '128MB' }]);
    await client.setBufferPool('large'); // already: nothing to do
    expect(client.recycles).toBe(2);
    await client.setBufferPool('small');
    expect(await client.query('SHOW shared_buffers')).toEqual([{ shared_buffers: '16MB' }]);
    expect(reasons).toEqual(['buffer pool', 'large value', 'buffer pool']);
  });

  it('closes while a recycle is due without opening another worker', async () => {
    const client = await open({ recycleAfterValueBytes: 1024, recycleQuietMs: 10_000 });
    await client.query('INSERT INTO items VALUES (1, $1)', [Buffer.alloc(4096)]);
    await client.close();
    db = undefined;
    // The data dir is free again: another client opens it and finds the row.
    db = await openPgliteInWorker(dir);
    expect(await db.query('SELECT id FROM items')).toEqual([{ id: 1 }]);
    expect(db.recycles).toBe(0);
  });
});
