import { join } from 'node:path';
import { app, BrowserWindow, ipcMain, Menu, nativeImage, protocol, safeStorage, session, shell, Tray } from 'electron';
import { usePrivateUmask } from '../core/private-files.js';
import { createSwitchboard, type Switchboard } from '../core/switchboard.js';
import { APP_INDEX_URL, APP_SCHEME, APP_SCHEME_PRIVILEGES, STARTUP_URL, createAppProtocolHandler, isAppUrl } from './app-protocol.js';
import { setupIpc, setupLive, type SenderPolicy } from './ipc.js';
import { createCoreRunner } from './core-runner.js';
import { fileLogger, setupQuit, startCore } from './lifecycle.js';
import { createSafeStorageVault } from './secrets.js';
import { CONTENT_SECURITY_POLICY, devContentSecurityPolicy, guardWebContents, hardenSession } from './security.js';
import { setupSingleInstance } from './single-instance.js';
import { createStartupScreen } from './startup-screen.js';
import { setupTray } from './tray.js';
import { createMainWindow, setupWindow } from './window.js';

// The desktop shell only composes: each concern lives in its own module, tested in plain Node.

// electron-vite sets this under `npm start`; a packaged app never loads from a server.
const devServerUrl = app.isPackaged ? undefined : process.env.ELECTRON_RENDERER_URL;
const isOurUrl = (url: string) => isAppUrl(url, devServerUrl);
const contentSecurityPolicy = devServerUrl ? devContentSecurityPolicy(devServerUrl) : CONTENT_SECURITY_POLICY;
const resources = join(import.meta.dirname, '../../resources');
const logPath = join(app.getPath('logs'), 'switchboard.log');
const dataDir = app.getPath('userData');
const logger = fileLogger(logPath);
const logFailure = (error: Error) => logger.error(error.stack ?? error.message);
// What the window shows until the core is up: its steps, or why it failed (startup-screen.ts).
const startup = createStartupScreen({ dataDir, configPath: join(dataDir, 'config.json'), retry: () => void core.boot(), quit: () => app.quit() });

// Before anything is written: the database, token, config and secrets are for this account only.
usePrivateUmask();

// Before `ready`, or the scheme gets no origin and no secure context.
protocol.registerSchemesAsPrivileged([APP_SCHEME_PRIVILEGES]);

const mainWindow = setupWindow({
  create: () => createMainWindow(BrowserWindow, { preloadPath: join(import.meta.dirname, '../preload/index.cjs'), iconPath: join(resources, 'icon.png') }),
  url: () => (startup.view().state === 'ready' ? (devServerUrl ?? APP_INDEX_URL) : STARTUP_URL),
  onLoadError: (error) => logger.error(`window: ${error.message}`),
});
const showWindow = () => void app.whenReady().then(() => mainWindow.show());
const senders: SenderPolicy = { contents: () => mainWindow.contents(), isAppUrl: isOurUrl };
// One core at a time: a first start, a failed one tried again, one whose database was lost (core-runner.ts).
const core = createCoreRunner({
  start: (onDatabaseWorkerCrash) =>
    startCore(
      createSwitchboard,
      () => ({
        dataDir,
        env: process.env,
        token: process.env.SWITCHBOARD_TOKEN || undefined,
        vault: createSafeStorageVault({ dataDir, encryptor: safeStorage, platform: process.platform, logger }),
        // A PGlite query on the main thread stalls the window (STACK.md): keep it in a worker.
        databaseInWorker: true,
        onDatabaseWorkerCrash,
        logger,
        onStartupPhase: (phase) => startup.phase(phase),
      }),
      logPath,
      logger,
    ),
  screen: startup,
  attach: attachToCore,
  showUi: () => mainWindow.reload(), // the open window switches to the UI (a closed one opens on it from the tray)
  showFailure: () => mainWindow.present(), // the screen shows the failure; a closed window opens on it
  logPath,
  logger,
});

if (setupSingleInstance(app, showWindow)) {
  app.on('web-contents-created', (_event, contents) => guardWebContents(contents, { openExternal: (url) => shell.openExternal(url), logger }));
  // Closing the window keeps the core receiving; only a failed start has nothing to keep.
  app.on('window-all-closed', () => {
    if (startup.view().state === 'failed') app.quit();
  });
  app.on('activate', showWindow);
  app
    .whenReady()
    .then(start)
    .catch(logFailure);
}

async function start(): Promise<void> {
  hardenSession(session.defaultSession, { contentSecurityPolicy, isAppUrl: isOurUrl });
  protocol.handle(APP_SCHEME, createAppProtocolHandler({ rendererDir: join(import.meta.dirname, '../renderer'), contentSecurityPolicy, startup: startup.respond }));
  setupIpc(ipcMain, { api: core.api, senders, logger });
  // Registered now so a quit during startup still waits for the database to open, then closes it.
  setupQuit(app, () => core.stop(), logger);
  // The window opens at once, on the start-up screen.
  mainWindow.show();
  await core.boot();
}

/** What lives with a running core: the tray and the live messages to the window. */
function attachToCore(sb: Switchboard): () => void {
  const stopLive = setupLive(sb, senders);
  const tray = setupTray({
    createTray: (icon) => new Tray(icon),
    buildMenu: (template) => Menu.buildFromTemplate(template),
    icon: nativeImage.createFromPath(join(resources, process.platform === 'darwin' ? 'trayTemplate.png' : 'tray.png')),
    sb,
    open: showWindow,
    quit: () => app.quit(),
  });
  return () => {
    tray.close();
    stopLive();
  };
}
