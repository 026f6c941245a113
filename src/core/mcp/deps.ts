import type { EventBus } from '../bus.js';
import type { Logger } from '../logger.js';
import type { ProviderSet } from '../provider-set.js';
import type { ReplayEngine } from '../replay/replay.js';
import type { EventStore } from '../store/event-store.js';
import type { ShapeService } from '../shapes/service.js';
import type { SuiteService } from '../suites/suite-service.js';
import type { TestEventSender } from '../test-events/send.js';

/** What the MCP face needs from the core; built once in setup.ts. */
export interface McpDeps {
  readonly store: EventStore;
  readonly bus: EventBus;
  readonly providers: Pick<ProviderSet, 'statuses' | 'allSecrets' | 'config'>;
  readonly replays: Pick<ReplayEngine, 'replay'>;
  readonly testEvents: Pick<TestEventSender, 'send'>;
  readonly suites: Pick<SuiteService, 'save' | 'start' | 'cancel' | 'getRun'>;
  readonly shapes: Pick<ShapeService, 'describe'>;
  readonly logger: Logger;
  readonly version: string;
  /** The receiver's local origin, e.g. http://127.0.0.1:7777 (known once started). */
  receiverUrl(): string;
}

