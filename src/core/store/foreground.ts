import type { QueryOptions, SqlClient } from './sql-client.js';

/**
 * Foreground first (DESIGN §17). On the embedded database every statement runs on one thread,
 * one after another: a background statement of 40 ms (the search indexer's batch, a retention
 * DELETE) makes every read and applier batch queued behind it wait 40 ms. So the store sends
 * its statements down two lanes:
 *
 * - the foreground lane (reads, the journal's applier, replays, rejections) goes straight to the
 *   database, counted;
 * - the background lane runs one slice at a time, and only when no foreground statement is in
 *   flight; a slice is one small statement (≤ 5 ms of database time: BACKGROUND_SLICE_MS, kept
 *   by SliceSize), so a foreground statement that arrives meanwhile waits for at most that slice.
 *
 * A background job never starves the foreground; under a steady foreground load it waits (the
 * search indexer has its own bound on how far behind that may leave it).
 *
 * One background cost cannot be cut into slices of that size: GIN's fast update merges its
 * pending list inside whichever insert fills it (35–190 ms at 1M events). The search indexer
 * avoids it while someone is using the database (quietFor(); search-indexer.ts). sliceStats()
 * keeps what each job's slices cost, the benchmark's account of where a read's p99 goes.
 */

/** The database time one background slice aims at. */
export const BACKGROUND_SLICE_MS = 4;

/** What the background lane's slices of one job cost (the benchmark's account of where reads' p99 goes). */
export interface SliceStats {
  slices: number;
  totalMs: number;
  maxMs: number;
  /** Slices over 10 ms and over 25 ms: each one a read could have waited for. */
  over10: number;
  over25: number;
}

export class DatabaseLanes {
  private inFlight = 0;
  /** When the foreground last went idle (performance.now()); -Infinity: not yet used. */
  private idleSince = -Infinity;
  private idleWaiters: (() => void)[] = [];
  private releaseScheduled = false;
  /** The slice in the database now, if any: slices run one at a time. */
  private slice: Promise<unknown> = Promise.resolve();
  private readonly stats = new Map<string, SliceStats>();
  /** The foreground lane: the database, with every statement counted. */
  readonly foreground: SqlClient;

  constructor(private readonly db: SqlClient) {
    this.foreground = this.counted(db);
  }

  /** Foreground statements in flight (tests, benchmarks). */
  get foregroundInFlight(): number {
    return this.inFlight;
  }

  /** What each job's slices cost so far, by the label it gave (`background` when none). */
  sliceStats(): Record<string, SliceStats> {
    return Object.fromEntries([...this.stats].map(([label, stats]) => [label, { ...stats }]));
  }

  /** How long the foreground has been idle, in ms (0 while a statement is in flight). */
  quietFor(): number {
    return this.inFlight > 0 ? 0 : performance.now() - this.idleSince;
  }

  /**
   * Runs `work` — one bounded statement, or a few — on the background lane: after the slice
   * before it, once no foreground statement is in flight. `urgent` skips the wait for the
   * foreground (one slice between its statements): for background work whose delay would cost
   * the foreground more than the slice does (the search indexer far behind, reads slowing down).
   */
  background<T>(work: (db: SqlClient) => Promise<T>, options: { urgent?: boolean; label?: string | (() => string) } = {}): Promise<T> {
    const run = this.slice.catch(() => {}).then(async () => {
      // A turn of the event loop first: foreground work about to be sent (a group commit, a
      // request just read) goes before the slice, not after a chain of them.
      await new Promise((resolve) => setImmediate(resolve));
      while (this.inFlight > 0 && !options.urgent) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
      const started = performance.now();
      try {
        return await work(this.db);
      } finally {
        const label = typeof options.label === 'function' ? options.label() : options.label;
        this.count(label ?? 'background', performance.now() - started);
      }
    });
    this.slice = run;
    return run;
  }

  private count(label: string, ms: number): void {
    let stats = this.stats.get(label);
    if (!stats) this.stats.set(label, (stats = { slices: 0, totalMs: 0, maxMs: 0, over10: 0, over25: 0 }));
    stats.slices++;
    stats.totalMs += ms;
    stats.maxMs = Math.max(stats.maxMs, ms);
    if (ms > 10) stats.over10++;
    if (ms > 25) stats.over25++;
  }

  private counted(db: SqlClient): SqlClient {
    const track = async <T>(statement: () => Promise<T>): Promise<T> => {
      this.inFlight++;
      try {
        return await statement();
      } finally {
        this.inFlight--;
        if (this.inFlight === 0) {
          this.idleSince = performance.now();
          this.releaseBackground();
        }
      }
    };
    const lane: SqlClient = {
      kind: db.kind,
      query: <Row>(sql: string, params?: readonly unknown[], options?: QueryOptions) => track(() => db.query<Row>(sql, params, options)),
      exec: (sql: string) => track(() => db.exec(sql)),
      transaction: <T>(fn: (tx: SqlClient) => Promise<T>) => track(() => db.transaction(fn)),
      close: () => db.close(),
      ...(db.copyFrom ? { copyFrom: (sql: string, data: Uint8Array, largest: number) => track(() => db.copyFrom!(sql, data, largest)) } : {}),
      ...(db.listen ? { listen: db.listen.bind(db) } : {}),
    };
    return lane;
  }

  /**
   * The foreground went idle: let the background go on — after the callbacks of this turn, so a
   * read that sends its next statement as soon as the last one answered (a page, then its last
   * replays) is not cut in two by a slice.
   */
  private releaseBackground(): void {
    if (this.releaseScheduled) return;
    this.releaseScheduled = true;
    setImmediate(() => {
      this.releaseScheduled = false;
      if (this.inFlight > 0) return;
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const wake of waiters) wake();
    });
  }
}

/**
 * How many rows a background slice takes, adapted to what the last slices cost: aims each at
 * BACKGROUND_SLICE_MS of database time, whatever the machine, the rows' sizes or the table's.
 * On a busy machine single slices take several times their usual time for reasons of their own
 * (the other core was taken), so one slow slice halves the size at most, and it grows back by
 * half again per quick slice — never below `minRows` (a quarter of the first size by default).
 */
export class SliceSize {
  private current: number;
  private readonly minRows: number;
  private readonly targetMs: number;

  constructor(private readonly options: { initialRows: number; minRows?: number; maxRows: number; targetMs?: number }) {
    this.current = Math.min(options.maxRows, options.initialRows);
    this.minRows = Math.min(this.current, options.minRows ?? Math.max(1, Math.floor(options.initialRows / 4)));
    this.targetMs = options.targetMs ?? BACKGROUND_SLICE_MS;
  }

  get rows(): number {
    return this.current;
  }

  /** A slice of `rows` took `ms`: the next ones are sized by it. */
  record(rows: number, ms: number): void {
    if (rows <= 0) return;
    if (ms > this.targetMs) {
      this.current = Math.max(this.minRows, Math.floor(this.current * Math.max(0.5, this.targetMs / ms)));
    } else if (ms < this.targetMs / 2 && rows >= this.current) {
      this.current = Math.min(this.options.maxRows, Math.ceil(this.current * 1.5));
    }
  }
}
