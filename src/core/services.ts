import type { ConfigProblem } from '../shared/api.js';
import type { ForwardProblem } from '../shared/api.js';
import type { EventBus } from './bus.js';
import type { Config, ConfigInput, SecretVault } from './config.js';
import type { ControlServer } from './control/server.js';
import type { Logger } from './logger.js';
import type { ProviderSet } from './provider-set.js';
import type { ReplayEngine } from './replay/replay.js';
import type { EventStore } from './store/event-store.js';
import type { ShapeService } from './shapes/service.js';
import type { SuiteService } from './suites/suite-service.js';
import type { TestEventSender } from './test-events/send.js';

/**
 * What the faces of the core depend on — the UI API and its HTTP transport, MCP, export and
 * import, the Electron shell's IPC and tray, the CLI's banner and stream — and nothing more.
 * Only the composition root (switchboard.ts, which implements this) knows how the parts are
 * built and wired; a face never imports it, so no face and the root import each other.
 */

export interface Urls {
  receiver: string;
  control: string;
  mcp: string;
  ui: string;
}

/** The start options a face may read. */
export interface ServiceOptions {
  readonly dataDir: string;
  /** The desktop vault for secrets typed into the UI; absent headless. */
  readonly vault?: SecretVault;
  /** Set when the config was given in memory (tests, embedding): edits then stay in memory. */
  readonly config?: ConfigInput;
}

export interface Services {
  readonly bus: EventBus;
  readonly providers: ProviderSet;
  readonly logger: Logger;
  readonly version: string;
  readonly now: () => number;
  readonly options: ServiceOptions;
  readonly configPath: string;
  /** The current config; replaced as a whole on every edit or reload. */
  readonly config: Config;
  /** Validates, writes config.json atomically, and applies it live. */
  updateConfig(next: ConfigInput): Promise<Config>;

  // Available once started (reading them before throws).
  readonly store: EventStore;
  readonly replays: ReplayEngine;
  readonly testEvents: TestEventSender;
  readonly suites: SuiteService;
  /** Shapes of event types (DESIGN §16). */
  readonly shapes: ShapeService;
  readonly control: Pick<ControlServer, 'mount'>;
  readonly token: string;
  readonly url: Urls;
  /** The last refused hand edit of config.json; null while the file is valid. */
  readonly configProblem: ConfigProblem | null;
  /** Which of these forward targets cannot deliver: refused by the target guard, or not answering lately. */
  forwardProblems(targets: readonly string[]): ForwardProblem[];
  /** The MCP tools the server lists, by name (the Connect screen). */
  readonly mcpToolNames: readonly string[];
  /** Connected MCP sessions; null before the MCP face is mounted. */
  readonly mcpSessionCount: number | null;

  /** Registers something to close on stop; closed in reverse order of registration. */
  onStop(name: string, close: () => Promise<void> | void): void;
}
