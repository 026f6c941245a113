import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { EventSummary } from '../../shared/events.js';
import { EventJournal, type JournalOptions } from '../journal/event-journal.js';
import type { Logger } from '../logger.js';
import { migrationsDir } from '../paths.js';
import type { StartupPhase } from '../startup-phase.js';
import { EventStore } from './event-store.js';
import { migrate } from './migrations.js';
import { openPgliteInWorker, type WorkerSqlClient } from './pglite-worker.js';
import type { SearchTuning } from './search.js';
import { SearchIndexer, type BufferPool } from './search-indexer.js';
import { openPglite, openPostgres, type SqlClient } from './sql-client.js';

/**
 * Opening the event log: the database (embedded PGlite, in a worker thread or not, or a
 * PostgreSQL server), its migrations, the store, and on the embedded database the ingest journal
 * — whose unapplied tail is applied here, before any port opens — and the search indexer.
 */

/** `memory://` (tests), a PostgreSQL URL (team mode), else PGlite in the data dir. */
export function openDatabase(
  url: string | null | undefined,
  options: { dataDir: string; inWorker?: boolean; logger: Logger; onWorkerCrash?: (error: Error) => void },
): Promise<SqlClient> {
  if (url === 'memory://') return openPglite('memory://');
  if (url) return openPostgres(url);
  return options.inWorker
    ? openPgliteInWorker(options.dataDir, {
        // After a multi-MB body the worker is replaced to give its memory back (pglite-worker.ts).
        // (A new buffer pool is the search indexer's to tell: it knows why.)
        onRecycle: ({ ms, reason }) => {
          if (reason === 'large value') options.logger.info(`database: worker restarted to release the memory of a large event (${Math.round(ms)} ms)`);
        },
        onCrash: (error) => {
          options.logger.error(`database: ${error.message}; the next statement starts a new worker`);
          options.onWorkerCrash?.(error);
        },
      })
    : openPglite(options.dataDir);
}

export interface OpenStoreOptions {
  dataDir: string;
  /** The database is in memory (tests): its journal starts empty too. */
  inMemory: boolean;
  /** The journal's bounds; `false` stores each delivery before answering (SWITCHBOARD_JOURNAL=off). */
  journal?: JournalOptions | false;
  logger: Logger;
  maxRejections: () => number;
  searchTuning?: SearchTuning;
  onPhase: (step: StartupPhase['step'], message: string) => void;
}

function isWorkerClient(sql: SqlClient): sql is WorkerSqlClient {
  return 'setBufferPool' in sql && typeof sql.setBufferPool === 'function';
}

function bufferPoolOf(sql: WorkerSqlClient): BufferPool {
  return {
    get size() {
      return sql.bufferPool;
    },
    resize: (size) => sql.setBufferPool(size),
  };
}

export interface OpenedStore {
  store: EventStore;
  /** The embedded database's ingest journal (null on PostgreSQL). */
  journal: EventJournal | null;
  searchIndexer: SearchIndexer;
  /** Stops the indexer, drains the journal and closes the database. */
  close(): Promise<void>;
}

/**
 * Migrates `sql` and builds the store on it; from then on `sql` is closed with the store (close()).
 * If this fails, nothing but `sql` was opened: the caller closes it.
 */
export async function openStore(sql: SqlClient, options: OpenStoreOptions): Promise<OpenedStore> {
  const store = new EventStore(sql, { maxRejections: options.maxRejections, ...(options.searchTuning ? { search: options.searchTuning } : {}) });
  let journal: EventJournal | null = null;
  let indexer: SearchIndexer | null = null;
  await migrate(sql, migrationsDir(), (pending) => options.onPhase('migrating', `migrating the database to the current schema (${pending.join(', ')})`));
  if (sql.kind === 'pglite' && options.journal !== false) {
    // Embedded: acknowledge from the journal (DESIGN §5). An in-memory database starts empty, so its journal does too.
    if (options.inMemory) await rm(join(options.dataDir, 'journal'), { recursive: true, force: true });
    const journalOptions = options.journal;
    journal = await EventJournal.open(options.dataDir, store.journalSide, options.logger, {
      ...journalOptions,
      onRecover: (_count, message) => options.onPhase('applying-journal', message),
      onApplied: (events: readonly EventSummary[]) => {
        journalOptions?.onApplied?.(events);
        indexer?.wake();
      },
    });
    store.useJournal(journal);
  }
  const opened = journal;
  indexer = new SearchIndexer(store.lanes, {
    logger: options.logger,
    // One statement at a time holds every other back only on the embedded database.
    adaptIndexMode: sql.kind === 'pglite',
    ingestBacklog: () => opened?.stats.lagRecords ?? 0,
    newestId: () => opened?.allocatedThrough ?? 0,
    lastIngestAt: () => opened?.lastSubmitAt ?? -Infinity,
    // PGlite in its worker is reopened with a larger buffer pool for a large backfill.
    ...(isWorkerClient(sql) ? { pool: bufferPoolOf(sql) } : {}),
  });
  // A large backfill waiting: the large buffer pool now, while nobody can read yet.
  await indexer.preparePool();
  indexer.start();
  const searchIndexer = indexer;
  return {
    store,
    journal,
    searchIndexer,
    async close() {
      await searchIndexer.stop();
      await store.close();
    },
  };
}
