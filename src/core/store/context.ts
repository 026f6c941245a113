import { DatabaseLanes } from './foreground.js';
import type { SqlClient } from './sql-client.js';
import type { JournalPort, SqlStep } from './types.js';

/** What a store module works with: the database's two lanes, and the journal that reads wait for. */
export class StoreContext {
  /** Set on the embedded database: inserts go through the journal (src/core/journal). */
  journal: JournalPort | null = null;
  /** When the last read began (performance.now()): retention's VACUUM waits for a pause in them. */
  lastReadAt = -Infinity;

  /** Foreground and background lanes (foreground.ts, DESIGN §17). */
  readonly lanes: DatabaseLanes;
  /** The foreground lane: every statement of a read, a write or the applier goes here. */
  readonly db: SqlClient;

  constructor(database: SqlClient) {
    this.lanes = new DatabaseLanes(database);
    this.db = this.lanes.foreground;
  }

  /** Every read starts here: it sees every event acknowledged before it began (read-your-writes). */
  caughtUp(): Promise<void> {
    this.lastReadAt = performance.now();
    return this.journal ? this.journal.barrier() : Promise.resolve();
  }

  /** Runs one statement of a list query, with its planner settings. */
  run<Row>(step: SqlStep): Promise<Row[]> {
    return this.db.query<Row>(step.sql, step.params, step.settings ? { settings: step.settings } : {});
  }
}
