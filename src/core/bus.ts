import { EventEmitter } from 'node:events';
import type { Attempt, EventSummary, Rejection } from '../shared/events.js';
import type { ConfigProblem } from '../shared/api.js';
import type { ProviderStatus } from '../shared/providers.js';
import type { ReplayRecord } from './store/types.js';

/**
 * In-process broadcast of what the core did, after it is committed. The renderer's live
 * stream, MCP subscriptions, `wait_for_webhook_event` and forward rules all listen here, so
 * none of them polls the database.
 */
export interface BusEvents {
  event: [EventSummary];
  /** A delivery the store already had (same provider and external id): answered, not stored again. */
  duplicate: [EventSummary];
  rejection: [Rejection];
  /** An attempt answered by an answer rule (DESIGN §15): the terminal prints `answered 503 by rule 1, attempt 2`. */
  answered: [AnsweredAttempt];
  replay: [ReplayRecord];
  'provider-status': [ProviderStatus];
  'config-changed': [];
  /** A hand edit of config.json was refused (or, with null, the file is valid again). */
  'config-problem': [ConfigProblem | null];
}

export interface AnsweredAttempt extends Attempt {
  event: EventSummary;
}

export class EventBus extends EventEmitter<BusEvents> {
  constructor() {
    super();
    // Every MCP session, SSE client and waiter adds a listener; many is normal, not a leak.
    this.setMaxListeners(0);
  }
}
