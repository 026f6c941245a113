import { watch, type FSWatcher } from 'node:fs';
import { mkdir, access, constants } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EventBus } from './bus.js';
import { setupApi } from './api/http.js';
import type { SwitchboardApi } from '../shared/api.js';
import { configWarnings, loadConfigFile, parseConfig, writeConfigFile, type Config, type ConfigInput, type SecretVault } from './config.js';
import { loadOrCreateToken } from './control/auth.js';
import { ControlServer } from './control/server.js';
import { SwitchboardError } from './errors.js';
import { consoleLogger, type Logger } from './logger.js';
import type { McpSessions } from './mcp/sessions.js';
import { setupMcp } from './mcp/setup.js';
import { originOf } from './net.js';
import { migrationsDir as defaultMigrationsDir, rendererDir as defaultRendererDir, switchboardVersion } from './paths.js';
import { ProviderSet } from './provider-set.js';
import { QueueManager } from './queue/queue-manager.js';
import { Receiver } from './receiver/receiver.js';
import { Forwarder } from './replay/forward.js';
import { ReplayEngine } from './replay/replay.js';
import { EventStore } from './store/event-store.js';
import { migrate } from './store/migrations.js';
import { openPgliteInWorker } from './store/pglite-worker.js';
import { openPglite, openPostgres, type SqlClient } from './store/sql-client.js';

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
  vault?: SecretVault;
  logger?: Logger;
  /** The built web UI; `null` serves none. */
  rendererDir?: string | null;
  now?: () => number;
}

export interface Urls {
  receiver: string;
  control: string;
  mcp: string;
  ui: string;
}

export class Switchboard {
  readonly bus = new EventBus();
  readonly providers: ProviderSet;
  readonly logger: Logger;
  readonly version = switchboardVersion();
  readonly now: () => number;
  readonly configPath: string;
  private currentConfig!: Config;
  private sql: SqlClient | undefined;
  private eventStore: EventStore | undefined;
  private replayEngine: ReplayEngine | undefined;
  private mcpSessions: McpSessions | undefined;
  private apiHandlers: SwitchboardApi | undefined;
  private receiver: Receiver | undefined;
  private controlServer: ControlServer | undefined;
  private controlToken: string | undefined;
  private urls: Urls | undefined;
  private readonly closers: { name: string; close: () => Promise<void> | void }[] = [];
  private retentionTimer: NodeJS.Timeout | undefined;
  private configWatcher: FSWatcher | undefined;

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

  /** The UI API (src/shared/api.ts), served over HTTP here and over IPC by the desktop shell. */
  get api(): SwitchboardApi {
    if (!this.apiHandlers) throw new Error('switchboard is not started');
    return this.apiHandlers;
  }

  /** Connected MCP sessions, for the Connect screen; null before start. */
  get mcpSessionCount(): number | null {
    return this.mcpSessions?.size ?? null;
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
    await ensureWritableDir(options.dataDir);
    if (options.config !== undefined) {
      this.currentConfig = parseConfig(options.config, 'config');
    } else {
      this.currentConfig = (await loadConfigFile(this.configPath)).config;
    }
    for (const warning of configWarnings(this.currentConfig)) this.logger.warn(warning);
    this.providers.load(this.currentConfig);
    this.controlToken = options.token ?? (await loadOrCreateToken(options.dataDir));

    try {
      this.sql = await openDatabase(options.databaseUrl ?? this.currentConfig.database.url, options);
      this.closers.push({ name: 'database', close: () => this.eventStore?.close() ?? this.sql?.close() });
      await migrate(this.sql, defaultMigrationsDir());
      this.eventStore = new EventStore(this.sql, { maxRejections: () => this.currentConfig.retention.max_rejections });
      const stopWatching = await this.eventStore.watchOtherInstances((event) => this.bus.emit('event', event));
      this.onStop('events from other instances', stopWatching);
      const replays = new ReplayEngine({ store: this.eventStore, bus: this.bus, providers: this.providers, config: () => this.currentConfig, version: this.version, now: this.now, logger: this.logger });
      this.replayEngine = replays;
      this.onStop('replay', () => replays.close());
      const forwarder = new Forwarder({ engine: replays, bus: this.bus, config: () => this.currentConfig, logger: this.logger });
      this.onStop('forward rules', () => forwarder.close());

      const deps = { store: this.eventStore, bus: this.bus, providers: this.providers, logger: this.logger };
      const queues = new QueueManager(deps, () => this.currentConfig);
      queues.start();
      this.onStop('queues', () => queues.stop());
      this.receiver = new Receiver(deps, {
        host: this.currentConfig.receiver.host,
        port: options.receiverPort ?? this.currentConfig.receiver.port,
        maxBodyBytes: () => this.currentConfig.receiver.max_body_bytes,
        publicUrl: () => this.currentConfig.receiver.public_url ?? null,
        now: this.now,
      });
      this.controlServer = new ControlServer({
        host: this.currentConfig.control.host,
        port: options.controlPort ?? this.currentConfig.control.port,
        token: this.controlToken,
        rendererDir: options.rendererDir === undefined ? existingDir(defaultRendererDir()) : options.rendererDir,
        logger: this.logger,
      });
      this.apiHandlers = setupApi(this);
      this.mcpSessions = setupMcp(this);

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
    } catch (error) {
      await this.stop();
      throw error;
    }
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

  private watchConfig(): void {
    if (this.options.config !== undefined || !existsSync(this.configPath)) return;
    let timer: NodeJS.Timeout | undefined;
    try {
      this.configWatcher = watch(this.configPath, () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          loadConfigFile(this.configPath)
            .then(({ config }) => {
              if (JSON.stringify(config) !== JSON.stringify(this.currentConfig)) {
                this.applyConfig(config);
                this.logger.info(`reloaded ${this.configPath}`);
              }
            })
            .catch((error: Error) => this.logger.error(`${error.message} — keeping the previous configuration`));
        }, 100);
      });
      this.closers.push({ name: 'config watcher', close: () => (clearTimeout(timer), this.configWatcher?.close()) });
    } catch {
      // Watching is a convenience; edits through the UI reload without it.
    }
  }

  private startRetention(): void {
    const HOUR_MS = 60 * 60 * 1000;
    // Past this many deleted rows the planner's statistics are stale enough to refresh.
    const ANALYZE_AFTER_ROWS = 10_000;
    let running = false;
    const run = () => {
      const store = this.eventStore;
      if (!store || running) return;
      running = true;
      store
        .applyRetention(this.currentConfig.retention)
        .then(async (deleted) => {
          if (deleted.events > 0 || deleted.rejections > 0) {
            this.logger.info(`retention: deleted ${deleted.events} events and ${deleted.rejections} rejections`);
          }
          if (deleted.events + deleted.rejections >= ANALYZE_AFTER_ROWS) await store.analyze();
        })
        .catch((error: Error) => this.logger.error(`retention: ${error.message}`))
        .finally(() => (running = false));
    };
    const first = setTimeout(run, 30_000);
    this.retentionTimer = setInterval(run, HOUR_MS);
    first.unref();
    this.retentionTimer.unref();
    this.closers.push({
      name: 'retention',
      close: () => {
        clearTimeout(first);
        clearInterval(this.retentionTimer);
      },
    });
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
    this.eventStore = undefined;
    this.replayEngine = undefined;
    this.sql = undefined;
  }
}

/** `memory://` (tests), a PostgreSQL URL (team mode), else PGlite in the data dir. */
function openDatabase(url: string | null | undefined, options: SwitchboardOptions): Promise<SqlClient> {
  if (url === 'memory://') return openPglite('memory://');
  if (url) return openPostgres(url);
  return options.databaseInWorker ? openPgliteInWorker(options.dataDir) : openPglite(options.dataDir);
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
