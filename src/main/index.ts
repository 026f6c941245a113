import { join } from 'node:path';
import { app, BrowserWindow, ipcMain, Menu, nativeImage, protocol, safeStorage, session, shell, Tray } from 'electron';
import { usePrivateUmask } from '../core/private-files.js';
import { createSwitchboard } from '../core/switchboard.js';
import { APP_INDEX_URL, APP_SCHEME, APP_SCHEME_PRIVILEGES, STARTUP_ERROR_URL, createAppProtocolHandler, isAppUrl } from './app-protocol.js';
import { startupErrorHtml, type StartupFailure } from './error-screen.js';
import { setupIpc, setupLive, type SenderPolicy } from './ipc.js';
import { fileLogger, setupQuit, startCore } from './lifecycle.js';
import { createSafeStorageVault } from './secrets.js';
import { CONTENT_SECURITY_POLICY, devContentSecurityPolicy, guardWebContents, hardenSession } from './security.js';
import { setupSingleInstance } from './single-instance.js';
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
let failure: StartupFailure | null = null;

// Before anything is written: the database, token, config and secrets are for this account only.
usePrivateUmask();

// Before `ready`, or the scheme gets no origin and no secure context.
protocol.registerSchemesAsPrivileged([APP_SCHEME_PRIVILEGES]);

const mainWindow = setupWindow({
  create: () => createMainWindow(BrowserWindow, { preloadPath: join(import.meta.dirname, '../preload/index.cjs'), iconPath: join(resources, 'icon.png') }),
  url: () => (failure ? STARTUP_ERROR_URL : (devServerUrl ?? APP_INDEX_URL)),
  onLoadError: (error) => logger.error(`window: ${error.message}`),
});
const showWindow = () => void app.whenReady().then(() => mainWindow.show());

if (setupSingleInstance(app, showWindow)) {
  app.on('web-contents-created', (_event, contents) => guardWebContents(contents, { openExternal: (url) => shell.openExternal(url), logger }));
  // Closing the window keeps the core receiving; only a failed start has nothing to keep.
  app.on('window-all-closed', () => {
    if (failure) app.quit();
  });
  app.on('activate', showWindow);
  app
    .whenReady()
    .then(start)
    .catch((error: Error) => logger.error(error.stack ?? error.message));
}

async function start(): Promise<void> {
  hardenSession(session.defaultSession, { contentSecurityPolicy, isAppUrl: isOurUrl });
  protocol.handle(
    APP_SCHEME,
    createAppProtocolHandler({
      rendererDir: join(import.meta.dirname, '../renderer'),
      contentSecurityPolicy,
      startupErrorHtml: () => failure && startupErrorHtml(failure, join(dataDir, 'config.json')),
    }),
  );

  const starting = startCore(
    createSwitchboard,
    () => ({
      dataDir,
      env: process.env,
      token: process.env.SWITCHBOARD_TOKEN || undefined,
      vault: createSafeStorageVault({ dataDir, encryptor: safeStorage, platform: process.platform, logger }),
      // A PGlite query on the main thread stalls the window (STACK.md): keep it in a worker.
      databaseInWorker: true,
      logger,
    }),
    logPath,
    logger,
  );
  // The window opens at once; API calls made while the database opens wait for it.
  const api = starting.then((started) => (started.ok ? started.sb.api : Promise.reject(started.error)));
  api.catch(() => undefined); // a failed start is shown by the error page, not by each call
  const senders: SenderPolicy = { contents: () => mainWindow.contents(), isAppUrl: isOurUrl };
  setupIpc(ipcMain, { api, senders, logger });
  // Registered now so a quit during startup still waits for the database to open, then closes it.
  let closeShell = () => {};
  const stop = async () => {
    const started = await starting;
    closeShell();
    if (started.ok) await started.sb.stop();
  };
  setupQuit(app, stop, logger);
  mainWindow.show();

  const started = await starting;
  if (!started.ok) {
    failure = started.failure;
    mainWindow.reload(); // the open window switches to the error page…
    mainWindow.show(); // …or, if it was closed meanwhile, a new one opens on it
    return;
  }
  const { sb } = started;
  const stopLive = setupLive(sb, senders);
  const tray = setupTray({
    createTray: (icon) => new Tray(icon),
    buildMenu: (template) => Menu.buildFromTemplate(template),
    icon: nativeImage.createFromPath(join(resources, process.platform === 'darwin' ? 'trayTemplate.png' : 'tray.png')),
    sb,
    open: showWindow,
    quit: () => app.quit(),
  });
  closeShell = () => {
    tray.close();
    stopLive();
  };
}
