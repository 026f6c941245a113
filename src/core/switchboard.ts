import { mkdir, access, constants } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EventBus } from './bus.js';
import type { ConfigProblem, ForwardProblem, SwitchboardApi } from '../shared/api.js';
import { locateConfigProblem } from './config-problem.js';
import { watchConfigFile } from './config-watcher.js';
import { configWarnings, loadConfigFile, parseConfig, writeConfigFile, type Config, type ConfigInput, type SecretVault } from './config.js';
import { checkControlToken, loadOrCreateIdentityKey, loadOrCreateToken, TOKEN_FILE } from './control/auth.js';
import type { ControlServer } from './control/server.js';
import { watchControlToken } from './control/token-watcher.js';
import { SwitchboardError } from './errors.js';
import type { Services, Urls } from './services.js';
import { consoleLogger, type Logger } from './logger.js';
import type { McpSessions } from './mcp/sessions.js';
import { checkDistinctPorts, originOf, probePort } from './net.js';
import { rendererDir as defaultRendererDir, switchboardVersion } from './paths.js';
import { diskFullTrouble } from './file-trouble.js';
import { describePermissionFix, fixDataDirPermissions, refuseUnsafeDir, usePrivateUmask } from './private-files.js';
import { ProviderSet } from './provider-set.js';
import type { StartupPhase } from './startup-phase.js';
import type { Receiver } from './receiver/receiver.js';
import { AnswerRules } from './receiver/answer-rules.js';
import { AttemptRecorder } from './receiver/attempt-recorder.js';
import type { ReplayEngine } from './replay/replay.js';
import type { Forwarder } from './replay/forward.js';
import type { SuiteService } from './suites/suite-service.js';
import type { GithubSchemaCheck } from './shapes/github-schema.js';
import type { ShapeService } from './shapes/service.js';
import type { ShapeTracker } from './shapes/tracker.js';
import { forwardProblems } from './replay/forward-targets.js';
import { TOOL_SPECS } from './mcp/tools/catalog.js';
import type { EventJournal, JournalOptions } from './journal/event-journal.js';
import type { EventStore } from './store/event-store.js';
import { openDatabase, openStore, type OpenedStore } from './store/open-store.js';
import { scheduleRetention } from './store/retention.js';
import type { SearchTuning } from './store/search.js';
import type { SearchIndexer } from './store/search-indexer.js';
import { embeddedDatabaseExists } from './store/sql-client.js';
import { TestMarks } from './test-marks.js';
import { TestEventSender } from './test-events/send.js';

/**
 * The core, with no Electron in it: `createSwitchboard(options)` → `{ start, stop, … }`.
 * The CLI (`switchboard serve`) and the Electron main process are thin wrappers around it.
 */

export interface SwitchboardOptions {
  dataDir: string;
  /** Defaults to `<dataDir>/config.json`. */
  configPath?: string;
  /** Use this config instead of reading a file (tests). Edits are then kept in memory. */
  config?: ConfigInput;
  env?: Readonly<Record<string, string | undefined>>;
  /** Control token; defaults to `<dataDir>/control-token` (created on first run). */
  token?: string;
  receiverPort?: number;
  controlPort?: number;
  /** PostgreSQL URL, or `memory://` for an in-memory PGlite; overrides `database.url`. */
  databaseUrl?: string;
  /** Run the embedded database in a worker thread (Electron: keeps the main loop smooth). */
  databaseInWorker?: boolean;
  /** The database worker crashed (logged too); the next statement starts a new one (pglite-worker.ts). */
  onDatabaseWorkerCrash?: (error: Error) => void;
  /**
   * Bounds of the embedded database's journal (tests: backpressure); `false` stores each delivery
   * before answering, as 0.2 did (the ingest benchmark's comparison; SWITCHBOARD_JOURNAL=off).
   */
  journal?: JournalOptions | false;
  vault?: SecretVault;
  logger?: Logger;
  /** The built web UI; `null` serves none. */
  rendererDir?: string | null;
  now?: () => number;
  /** Each step of start() as it begins (also logged): the desktop's start-up screen shows them. */
  onStartupPhase?: (phase: StartupPhase) => void;
  /** Tests only: how searches read (EventStore SearchTuning), e.g. to make them run out of time. */
  searchTuning?: SearchTuning;
  /** Tests only: when retention first runs after start (30 s). */
  retentionFirstRunMs?: number;
}

/** The composition root: the only module that knows every part and every face (services.ts). */
export class Switchboard implements Services {
  readonly bus = new EventBus();
  readonly providers: ProviderSet;
  readonly logger: Logger;
  readonly version = switchboardVersion();
  readonly now: () => number;
  readonly configPath: string;
  private currentConfig!: Config;
  private opened: OpenedStore | undefined;
  private eventStore: EventStore | undefined;
  private replayEngine: ReplayEngine | undefined;
  private testEventSender: TestEventSender | undefined;
  private suiteService: SuiteService | undefined;
  private shapeService: ShapeService | undefined;
  private mcpSessions: McpSessions | undefined;
  private apiHandlers: SwitchboardApi | undefined;
  private receiver: Receiver | undefined;
  private controlServer: ControlServer | undefined;
  private controlToken: string | undefined;
  private urls: Urls | undefined;
  private readonly closers: { name: string; close: () => Promise<void> | void }[] = [];
  /** Fills the search index off the write path (tests and benchmarks call catchUp()). */
  searchIndexer: SearchIndexer | undefined;
  /** The embedded database's ingest journal (null on PostgreSQL). */
  journal: EventJournal | null = null;

  constructor(readonly options: SwitchboardOptions) {
    this.logger = options.logger ?? consoleLogger();
    this.now = options.now ?? Date.now;
    this.configPath = options.configPath ?? join(options.dataDir, 'config.json');
    this.providers = new ProviderSet(options.env ?? {}, this.bus, options.vault);
  }

  get config(): Config {
    return this.currentConfig;
  }

  get store(): EventStore {
    if (!this.eventStore) throw new SwitchboardError('storage_unavailable', 'switchboard is not started');
    return this.eventStore;
  }

  /** Replays and forward rules (src/core/replay); available once started. */
  get replays(): ReplayEngine {
    if (!this.replayEngine) throw new SwitchboardError('storage_unavailable', 'switchboard is not started');
    return this.replayEngine;
  }

  /** Test events (src/core/test-events); available once started. */
  get testEvents(): TestEventSender {
    if (!this.testEventSender) throw new SwitchboardError('storage_unavailable', 'switchboard is not started');
    return this.testEventSender;
  }

  /** Suites (src/core/suites); available once started. */
  get shapes(): ShapeService {
    if (!this.shapeService) throw new SwitchboardError('storage_unavailable', 'switchboard is not started');
    return this.shapeService;
  }

  get suites(): SuiteService {
    if (!this.suiteService) throw new SwitchboardError('storage_unavailable', 'switchboard is not started');
    return this.suiteService;
  }

  /** The UI API (src/shared/api.ts), served over HTTP here and over IPC by the desktop shell. */
  get api(): SwitchboardApi {
    if (!this.apiHandlers) throw new Error('switchboard is not started');
    return this.apiHandlers;
  }

  /** The last refused hand edit of config.json (src/core/config-problem.ts); null while the file is valid. */
  configProblem: ConfigProblem | null = null;
  private forwarder: Forwarder | undefined;

  forwardProblems(targets: readonly string[]): ForwardProblem[] {
    return forwardProblems(targets, this.currentConfig.replay.allow_hosts, (target) => this.forwarder?.failure(target) ?? null);
  }

  get mcpToolNames(): readonly string[] {
    return TOOL_SPECS.map((tool) => tool.name);
  }

  /** Connected MCP sessions, for the Connect screen; null before start. */
  get mcpSessionCount(): number | null {
    return this.mcpSessions?.liveCount ?? null;
  }

  get control(): ControlServer {
    if (!this.controlServer) throw new Error('switchboard is not started');
    return this.controlServer;
  }

  get token(): string {
    if (!this.controlToken) throw new Error('switchboard is not started');
    return this.controlToken;
  }

  get url(): Urls {
    if (!this.urls) throw new Error('switchboard is not started');
    return this.urls;
  }

  async start(): Promise<void> {
    const { options } = this;
    checkControlToken(options.token);
    // Before anything is written: the database, token and config are for this account only.
    usePrivateUmask();
    // Refused, not repaired, when another account could write it (issue #22.4): by now it may
    // hold a planted link or journal record, which a chmod would not undo.
    await refuseUnsafeDir(options.dataDir, 'data dir', { follow: true });
    await refuseUnsafeDir(join(options.dataDir, 'journal'), 'journal directory');
    await ensureWritableDir(options.dataDir);
    const permissions = fixDataDirPermissions(options.dataDir);
    if (options.config !== undefined) {
      this.currentConfig = parseConfig(options.config, 'config');
    } else {
      this.currentConfig = (await loadConfigFile(this.configPath)).config;
    }
    for (const warning of configWarnings(this.currentConfig)) this.logger.warn(warning);
    this.providers.load(this.currentConfig);

    try {
      const fixed = describePermissionFix(options.dataDir, await permissions);
      if (fixed) this.logger.warn(fixed);
      this.controlToken = options.token ?? (await loadOrCreateToken(options.dataDir));
      const identityKey = await loadOrCreateIdentityKey(options.dataDir);
      // Ports before the database: a port in use is said at once, not after seconds of opening.
      const receiverPort = options.receiverPort ?? this.currentConfig.receiver.port;
      const controlPort = options.controlPort ?? this.currentConfig.control.port;
      checkDistinctPorts(receiverPort, controlPort);
      await probePort(this.currentConfig.receiver.host, receiverPort, 'receiver');
      await probePort(this.currentConfig.control.host, controlPort, 'control');
      const url = options.databaseUrl ?? this.currentConfig.database.url;
      if (!url && !embeddedDatabaseExists(options.dataDir)) {
        this.startupPhase('creating-database', `creating the database in ${options.dataDir} — first start only, this takes a few seconds`);
      } else {
        this.startupPhase('opening-database', url === 'memory://' ? 'opening an in-memory database' : url ? 'connecting to the PostgreSQL server' : `opening the database in ${options.dataDir}`);
      }
      // The database opens (in its worker thread, on the other core) while this thread loads the
      // modules only needed once it is open: start-up is the longer of the two, not their sum.
      const opening = openDatabase(url, {
        dataDir: options.dataDir,
        inWorker: options.databaseInWorker,
        logger: this.logger,
        ...(options.onDatabaseWorkerCrash ? { onWorkerCrash: options.onDatabaseWorkerCrash } : {}),
      }).then((sql) => {
        this.closers.push({
          name: 'database',
          close: () => {
            // SWITCHBOARD_TRACE_LANES=1 (diagnostic, for `npm run bench -- scale indexing`): what
            // each background job's slices cost, in one line at stop (DESIGN §17).
            if (this.opened && process.env.SWITCHBOARD_TRACE_LANES === '1') this.logger.info(`background slices: ${JSON.stringify(this.opened.store.lanes.sliceStats())}`);
            return this.opened ? this.opened.close() : sql.close();
          },
        });
        return sql;
      });
      const [openedSql, loaded] = await Promise.allSettled([opening, loadServices()]);
      if (openedSql.status === 'rejected') {
        // A full disk shows as an obscure database error: say what it is (issue #22.5).
        const full = url ? null : await diskFullTrouble(openedSql.reason, options.dataDir, 'open the database in');
        throw full ?? openedSql.reason;
      }
      if (loaded.status === 'rejected') throw loaded.reason;
      const { ReplayEngine, Forwarder, QueueManager, Receiver, ControlServer, setupApi, setupMcp, SuiteStore, SuiteService } = loaded.value;
      const opened = await openStore(openedSql.value, {
        dataDir: options.dataDir,
        inMemory: url === 'memory://',
        ...(options.journal !== undefined ? { journal: options.journal } : {}),
        logger: this.logger,
        maxRejections: () => this.currentConfig.retention.max_rejections,
        ...(options.searchTuning ? { searchTuning: options.searchTuning } : {}),
        onPhase: (step, message) => this.startupPhase(step, message),
      });
      this.opened = opened;
      this.eventStore = opened.store;
      this.journal = opened.journal;
      this.searchIndexer = opened.searchIndexer;
      this.shapeService = this.startShapes(opened, loaded.value);
      const stopWatching = await this.eventStore.watchOtherInstances((event) => this.bus.emit('event', event));
      this.onStop('events from other instances', stopWatching);
      const replays = new ReplayEngine({ store: this.eventStore, bus: this.bus, providers: this.providers, config: () => this.currentConfig, version: this.version, now: this.now, logger: this.logger });
      this.replayEngine = replays;
      this.onStop('replay', () => replays.close());
      const suites = new SuiteService({ store: new SuiteStore(opened.store.lanes.foreground), events: this.eventStore, providers: this.providers, config: () => this.currentConfig, version: this.version, now: this.now, logger: this.logger });
      await suites.open();
      this.suiteService = suites;
      this.onStop('suite runs', () => suites.close());
      const forwarder = new Forwarder({ engine: replays, bus: this.bus, config: () => this.currentConfig, logger: this.logger });
      this.forwarder = forwarder;
      this.onStop('forward rules', () => forwarder.close());

      const testMarks = new TestMarks();
      // Attempts are written after the answers: the recorder closes after the receiver, before the database.
      const attempts = new AttemptRecorder(this.eventStore, this.logger);
      this.onStop('attempts', () => attempts.close());
      const deps = { store: this.eventStore, bus: this.bus, providers: this.providers, logger: this.logger, testMarks, answers: new AnswerRules(), attempts };
      this.testEventSender = new TestEventSender({
        providers: this.providers,
        config: () => this.currentConfig,
        marks: testMarks,
        receiverUrl: () => this.url.receiver,
        now: this.now,
      });
      const queues = new QueueManager(deps, () => this.currentConfig);
      queues.start();
      this.onStop('queues', () => queues.stop());
      this.receiver = new Receiver(deps, {
        host: this.currentConfig.receiver.host,
        port: receiverPort,
        maxBodyBytes: () => this.currentConfig.receiver.max_body_bytes,
        publicUrl: () => this.currentConfig.receiver.public_url ?? null,
        now: this.now,
        // The receiver is the tunneled port: it says that deliveries cannot be stored, not where the data dir is.
        unhealthy: async () => ((await this.journal?.trouble()) ? 'deliveries cannot be stored right now; the log and the control port’s /healthz say why' : null),
      });
      this.controlServer = new ControlServer({
        host: this.currentConfig.control.host,
        port: controlPort,
        token: this.controlToken,
        identityKey,
        rendererDir: options.rendererDir === undefined ? existingDir(defaultRendererDir()) : options.rendererDir,
        logger: this.logger,
        unhealthy: () => this.journal?.trouble() ?? Promise.resolve(null),
      });
      this.apiHandlers = setupApi(this);
      this.mcpSessions = setupMcp(this);

      this.startupPhase('starting-servers', 'starting the receiver and the control server');
      const receiverAddress = await this.receiver.start();
      this.closers.push({ name: 'receiver', close: () => this.receiver?.stop() });
      const controlAddress = await this.controlServer.start();
      this.closers.push({ name: 'control', close: () => this.controlServer?.stop() });

      const control = originOf(this.currentConfig.control.host, controlAddress.port);
      this.urls = {
        receiver: originOf(this.currentConfig.receiver.host, receiverAddress.port),
        control,
        mcp: `${control}/mcp`,
        ui: `${control}/#token=${this.controlToken}`,
      };
      this.startRetention();
      this.watchConfig();
      this.watchControlToken();
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  private startupPhase(step: StartupPhase['step'], message: string): void {
    this.logger.info(message);
    this.options.onStartupPhase?.({ step, message });
  }

  /** Registers something to close on stop; closed in reverse order of registration. */
  onStop(name: string, close: () => Promise<void> | void): void {
    this.closers.push({ name, close });
  }

  /** Validates, writes config.json atomically, and applies it live. */
  async updateConfig(next: ConfigInput): Promise<Config> {
    const parsed = this.options.config !== undefined ? parseConfig(next) : await writeConfigFile(this.configPath, next);
    this.applyConfig(parsed);
    return parsed;
  }

  private applyConfig(config: Config): void {
    this.currentConfig = config;
    this.providers.load(config);
    this.bus.emit('config-changed');
  }

  /** Hand edits of config.json apply live (src/core/config-watcher.ts); a given config has no file. */
  private watchConfig(): void {
    if (this.options.config !== undefined) return;
    const watcher = watchConfigFile({
      path: this.configPath,
      logger: this.logger,
      current: () => this.currentConfig,
      onProblem: (refused) => {
        this.configProblem = refused && locateConfigProblem(this.configPath, refused.text, refused.reason);
        this.bus.emit('config-problem', this.configProblem);
      },
      apply: (config) => {
        // A provider added by hand whose env variable was never set would only show up as 503s.
        const missingBefore = new Set(this.providersMissingSecrets().map(({ name }) => name));
        this.applyConfig(config);
        return this.providersMissingSecrets()
          .filter(({ name }) => !missingBefore.has(name))
          .map(({ name, advice }) => `provider "${name}" has no usable secret: ${advice}`);
      },
    });
    this.onStop('config watcher', () => watcher.close());
  }

  /** A control-token file replaced by hand applies at once; SWITCHBOARD_TOKEN (options.token) has no file. */
  private watchControlToken(): void {
    if (this.options.token !== undefined) return;
    const watcher = watchControlToken({
      path: join(this.options.dataDir, TOKEN_FILE),
      logger: this.logger,
      current: () => this.token,
      apply: (token) => {
        this.controlToken = token;
        this.control.setToken(token);
        if (this.urls) this.urls = { ...this.urls, ui: `${this.urls.control}/#token=${token}` };
      },
    });
    this.onStop('control-token watcher', () => watcher.close());
  }

  /** Enabled providers whose secret (or Redis URL) resolves to nothing, with what to do. */
  private providersMissingSecrets(): { name: string; advice: string }[] {
    return this.currentConfig.providers.flatMap((provider) => {
      if (!provider.enabled) return [];
      if ('url' in provider) {
        return this.providers.resolveSecret(provider.url) === undefined ? [{ name: provider.name, advice: this.providers.missingSecretAdvice([provider.url], 'URL') }] : [];
      }
      const advice = this.providers.webhook(provider.name)?.secretAdvice;
      return advice ? [{ name: provider.name, advice }] : [];
    });
  }

  private startRetention(): void {
    const stop = scheduleRetention(this.store, {
      policy: () => this.currentConfig.retention,
      logger: this.logger,
      ...(this.options.retentionFirstRunMs !== undefined ? { firstRunMs: this.options.retentionFirstRunMs } : {}),
    });
    this.closers.push({ name: 'retention', close: stop });
  }

  /**
   * Stops accepting, lets in-flight deliveries finish their writes, then closes the database.
   * Each step gets a bounded time so a stuck socket cannot keep the process alive forever.
   */
  async stop(timeoutMs = 10_000): Promise<void> {
    const closers = this.closers.splice(0).reverse();
    // Servers first (they are registered last), then the store drains and closes.
    for (const { name, close } of closers) {
      try {
        await withTimeout(Promise.resolve(close()), timeoutMs, name);
      } catch (error) {
        this.logger.error(`stopping ${name}: ${(error as Error).message}`);
      }
    }
    this.opened = undefined;
    this.eventStore = undefined;
    this.journal = null;
    this.searchIndexer = undefined;
    this.replayEngine = undefined;
    this.testEventSender = undefined;
    this.suiteService = undefined;
    this.shapeService = undefined;
  }

  /** The shape tracker (DESIGN §16): background slices of the store's lanes, woken by new events. */
  private startShapes(opened: OpenedStore, modules: { ShapeTracker: typeof ShapeTracker; ShapeService: typeof ShapeService; GithubSchemaCheck: typeof GithubSchemaCheck }): ShapeService {
    const github = new modules.GithubSchemaCheck();
    const journal = opened.journal;
    const tracker = new modules.ShapeTracker(opened.store.lanes, {
      logger: this.logger,
      kindOf: (name) => this.currentConfig.providers.find((provider) => provider.name === name)?.kind,
      checkGithub: (eventType, payload) => github.check(eventType, payload),
      ingestBacklog: () => journal?.stats.lagRecords ?? 0,
      barrier: () => journal?.barrier() ?? Promise.resolve(),
      newestId: () => journal?.allocatedThrough ?? 0,
      lastIngestAt: () => journal?.lastSubmitAt ?? -Infinity,
      yieldTo: () => opened.searchIndexer.backfilling,
    });
    // SWITCHBOARD_SHAPES=off (diagnostic, like SWITCHBOARD_JOURNAL=off): no upkeep, for the
    // ingest benchmark's side-by-side cost of it (DESIGN §16: ≤ 5 %).
    if (process.env.SWITCHBOARD_SHAPES === 'off') return new modules.ShapeService(opened.store, tracker);
    const wake = () => tracker.wake();
    this.bus.on('event', wake);
    tracker.start();
    // Stopped before the database closes (closers run in reverse order of registration).
    this.onStop('shapes', async () => {
      this.bus.off('event', wake);
      await tracker.stop();
      await github.close();
    });
    return new modules.ShapeService(opened.store, tracker);
  }
}

/**
 * What start() needs only once the database is open, imported while it opens (they weigh
 * ~400 ms of module loading: the MCP SDK, undici, ioredis, zod schemas).
 */
async function loadServices() {
  const [api, mcp, queues, receiver, forward, replay, control, suiteStore, suiteService, shapeTracker, shapeService, githubSchema] = await Promise.all([
    import('./api/http.js'),
    import('./mcp/setup.js'),
    import('./queue/queue-manager.js'),
    import('./receiver/receiver.js'),
    import('./replay/forward.js'),
    import('./replay/replay.js'),
    import('./control/server.js'),
    import('./store/suites.js'),
    import('./suites/suite-service.js'),
    import('./shapes/tracker.js'),
    import('./shapes/service.js'),
    import('./shapes/github-schema.js'),
  ]);
  return {
    setupApi: api.setupApi,
    setupMcp: mcp.setupMcp,
    QueueManager: queues.QueueManager,
    Receiver: receiver.Receiver,
    Forwarder: forward.Forwarder,
    ReplayEngine: replay.ReplayEngine,
    ControlServer: control.ControlServer,
    SuiteStore: suiteStore.SuiteStore,
    SuiteService: suiteService.SuiteService,
    ShapeTracker: shapeTracker.ShapeTracker,
    ShapeService: shapeService.ShapeService,
    GithubSchemaCheck: githubSchema.GithubSchemaCheck,
  };
}

export function createSwitchboard(options: SwitchboardOptions): Switchboard {
  return new Switchboard(options);
}

async function ensureWritableDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
    await access(dir, constants.W_OK);
  } catch (error) {
    throw new SwitchboardError('data_dir_unwritable', `the data dir ${dir} is not writable (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, {
      hint: 'choose another with --data-dir DIR or SWITCHBOARD_HOME, or fix its permissions',
      cause: error,
    });
  }
}

function existingDir(dir: string): string | null {
  return existsSync(join(dir, 'index.html')) ? dir : null;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not stop within ${ms} ms`)), ms);
    }),
  ]);
}
