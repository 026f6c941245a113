import { ATTEMPT_LOG_KEPT } from '../../shared/delivery-lab.js';
import type { Attempt, EventSummary, Rejection } from '../../shared/events.js';
import type { NewEvent } from '../new-event.js';
import { StoreContext } from './context.js';
import type { Cursor } from './cursor.js';
import type { DatabaseLanes } from './foreground.js';
import { Attempts, type NewAttempt } from './attempts.js';
import { Events } from './events.js';
import { ExportImport } from './export-import.js';
import { JournalSide } from './journal-side.js';
import { DEFAULT_MAX_REJECTIONS, Rejections } from './rejections.js';
import { Replays } from './replays.js';
import { Retention } from './retention.js';
import { Shapes } from './shapes.js';
import type { SearchTuning } from './search.js';
import type { SqlClient } from './sql-client.js';
import { readActivity, type ActivityRecord } from './provider-activity.js';
import { readSearchSnippets } from './search-snippets.js';
import { TeamNotify } from './team-notify.js';
import type {
  EventQuery,
  EventRecord,
  ExportFilter,
  ImportedEvent,
  InsertResult,
  JournalPort,
  LastReplayRecord,
  NewRejection,
  NewReplay,
  Page,
  ReplayRecord,
  RetentionPolicy,
  RetentionResult,
} from './types.js';

/**
 * The event log as the rest of the core sees it: one object over one database, running the same
 * statements on PGlite and PostgreSQL. The store is the only code that writes SQL; each of its
 * responsibilities is a module of its own (events, search, rejections, replays, retention,
 * export and import, the journal's side, team notify), which this composes.
 */
export class EventStore {
  private readonly ctx: StoreContext;
  private readonly events: Events;
  private readonly rejections: Rejections;
  private readonly replays: Replays;
  private readonly attempts: Attempts;
  private readonly retention: Retention;
  private readonly exports: ExportImport;
  private readonly team: TeamNotify;
  /** Shapes of event types and the tracker's notes on events (DESIGN §16): the faces' reads. */
  readonly shapes: Shapes;
  /** What the ingest journal calls to apply its records and check redeliveries (src/core/journal). */
  readonly journalSide: JournalSide;
  private journal: (JournalPort & { close(): Promise<void> }) | null = null;

  /** `maxRejections` is read at each trim, so a config reload applies without a restart. */
  constructor(
    private readonly db: SqlClient,
    options: {
      maxRejections?: () => number;
      /** Tests only: how a search reads (SEARCH_BUDGET_MS, SEARCH_INDEX_MAX_CANDIDATES, searchWindowRows). */
      search?: SearchTuning;
    } = {},
  ) {
    this.ctx = new StoreContext(db);
    this.team = new TeamNotify(this.ctx.db);
    this.events = new Events(this.ctx, this.team, options.search);
    this.rejections = new Rejections(this.ctx, () => options.maxRejections?.() ?? DEFAULT_MAX_REJECTIONS);
    this.replays = new Replays(this.ctx);
    this.attempts = new Attempts(this.ctx);
    this.retention = new Retention(this.ctx, this.rejections);
    this.exports = new ExportImport(this.ctx);
    this.journalSide = new JournalSide(this.ctx.db);
    this.shapes = new Shapes(this.ctx);
  }

  /** The database's foreground and background lanes (DESIGN §17): background jobs run their slices here. */
  get lanes(): DatabaseLanes {
    return this.ctx.lanes;
  }

  get databaseKind(): SqlClient['kind'] {
    return this.db.kind;
  }

  /** From now on inserts are acknowledged from `journal`, and every read waits for it (read-your-writes). */
  useJournal(journal: JournalPort & { close(): Promise<void> }): void {
    this.journal = journal;
    this.ctx.journal = journal;
  }

  /** When the last read began (performance.now()): retention's VACUUM waits for a pause in them. */
  get lastReadAt(): number {
    return this.ctx.lastReadAt;
  }

  insertEvent(event: NewEvent): Promise<InsertResult> {
    return this.events.insert(event);
  }

  getEvent(id: number): Promise<EventRecord | null> {
    return this.events.get(id);
  }

  /** These events with their payloads, in no particular order; ids not stored are absent (suites copy events). */
  getEvents(ids: readonly number[]): Promise<EventRecord[]> {
    return this.events.getMany(ids);
  }

  listEvents(query: EventQuery): Promise<Page<EventSummary>> {
    return this.events.list(query);
  }

  firstEventAfter(query: { provider?: string; event_type?: string; after_id: number }): Promise<EventSummary | null> {
    return this.events.firstAfter(query);
  }

  providerSeen(provider: string): Promise<boolean> {
    return this.events.providerSeen(provider);
  }

  latestEventId(): Promise<number> {
    return this.events.latestId();
  }

  estimatedEventCount(): Promise<number> {
    return this.events.estimatedCount();
  }

  clearEvents(): Promise<void> {
    return this.events.clear();
  }

  /** Events another instance stored in the same PostgreSQL database (team mode). */
  watchOtherInstances(onEvent: (event: EventSummary) => void): Promise<() => Promise<void>> {
    return this.team.watchOtherInstances(onEvent);
  }

  insertRejection(rejection: NewRejection): Promise<Rejection> {
    return this.rejections.insert(rejection);
  }

  trimRejections(cap: number, batchRows?: number): Promise<number> {
    return this.rejections.trim(cap, batchRows);
  }

  listRejections(query: { provider?: string; limit: number; cursor?: string }): Promise<Page<Rejection>> {
    return this.rejections.list(query);
  }

  insertReplay(replay: NewReplay): Promise<ReplayRecord> {
    return this.replays.insert(replay);
  }

  listReplays(eventId: number, limit?: number): Promise<ReplayRecord[]> {
    return this.replays.list(eventId, limit);
  }

  lastReplays(eventIds: readonly number[]): Promise<Map<number, LastReplayRecord>> {
    return this.replays.last(eventIds);
  }

  /** Attempts per delivery identity (DESIGN §15, attempts.ts). */
  recordAttempts(attempts: readonly NewAttempt[]): Promise<void> {
    return this.attempts.record(attempts);
  }

  attemptCount(eventId: number): Promise<number> {
    return this.attempts.count(eventId);
  }

  /** An event's attempt log, oldest first; a first attempt no rule decided is the event itself (status 200). */
  async attemptLog(event: Pick<EventSummary, 'id' | 'received_at' | 'attempts'>): Promise<Attempt[]> {
    const logged = await this.attempts.log(event.id);
    if (logged[0]?.attempt !== 1 && event.attempts <= ATTEMPT_LOG_KEPT) {
      logged.unshift({ attempt: 1, at: event.received_at, status: 200, rule: null, delay_ms: 0 });
    }
    return logged;
  }

  applyRetention(policy: RetentionPolicy, batchRows?: number): Promise<RetentionResult> {
    return this.retention.apply(policy, batchRows);
  }

  analyze(): Promise<void> {
    return this.retention.analyze();
  }

  reclaimSpace(): Promise<void> {
    return this.retention.reclaimSpace();
  }

  exportBatch(filter: ExportFilter, after: Cursor | null, limits: { rows: number; bytes: number; scanRows?: number }): Promise<{ events: EventRecord[]; next: Cursor | null }> {
    return this.exports.batch(filter, after, limits);
  }

  importEvents(events: readonly ImportedEvent[]): Promise<number> {
    return this.exports.import(events);
  }

  /** Per-provider activity and the log's totals, bounded (src/core/store/provider-activity.ts). */
  async activity(providers: readonly string[]): Promise<ActivityRecord> {
    await this.ctx.caughtUp();
    return readActivity(this.ctx.db, providers);
  }

  /** Excerpts around a search's match for one page of events (src/core/store/search-snippets.ts). */
  async searchSnippets(ids: readonly number[], search: string): Promise<Map<number, string>> {
    await this.ctx.caughtUp();
    return readSearchSnippets(this.ctx.db, ids, search);
  }

  /** Waits for queued inserts (and the journal's tail), then closes the database. */
  async close(): Promise<void> {
    const closing = this.events.close();
    await this.journal?.close();
    await closing;
    await this.rejections.settled();
    await this.db.close();
  }
}
