import type { BrowserWindow as ElectronBrowserWindow, BrowserWindowConstructorOptions, WebContents } from 'electron';

/**
 * The one app window. Its webPreferences are the heart of the shell's security (see
 * security.ts for what else guards it): the renderer gets no Node, runs in Chromium's sandbox,
 * and sees main only through the preload's named API, in a separate JavaScript world.
 */

export type BrowserWindowClass = new (options: BrowserWindowConstructorOptions) => ElectronBrowserWindow;

/**
 * Creates the window. The options are written out at the constructor call (rather than built
 * elsewhere and passed in) so that Electronegativity's static checks see them as well as the
 * tests; `BrowserWindow` is injected so the tests can record what it receives.
 */
export function createMainWindow(BrowserWindow: BrowserWindowClass, { preloadPath, iconPath }: { preloadPath: string; iconPath?: string }): ElectronBrowserWindow {
  return new BrowserWindow({
    width: 1280,
    height: 820,
    minWidth: 760,
    minHeight: 480,
    title: 'switchboard',
    // Shown on ready-to-show: no white flash, no half-painted window.
    show: false,
    autoHideMenuBar: true,
    ...(iconPath ? { icon: iconPath } : {}),
    webPreferences: {
      // Must be CommonJS: a sandboxed preload cannot be an ES module (STACK.md).
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      experimentalFeatures: false,
      navigateOnDragDrop: false,
      safeDialogs: true,
      spellcheck: false,
      // A middle click would otherwise ask for a new window (denied anyway by security.ts).
      disableBlinkFeatures: 'Auxclick',
    },
  });
}

export interface MainWindow {
  /** Shows the window, creating it when it was closed; focuses it when it is open. */
  show(): void;
  /** The web contents of the open window, if any: the only sender IPC accepts. */
  contents(): WebContents | null;
  /** Loads `url()` again in the open window (the UI, once the start-up screen is done). */
  reload(): void;
  /** Shows `url()` now: the open window loads it (unless it shows it already) and comes forward, or a new one opens on it. */
  present(): void;
}

export interface WindowDeps {
  create: () => ElectronBrowserWindow;
  /** What to load: the start-up screen, or the UI once the core is up. Asked at each creation. */
  url: () => string;
  onLoadError: (error: Error) => void;
}

/**
 * Closing the window destroys it (its renderer memory goes back to the OS) while the core keeps
 * receiving in the main process; `show()` builds a fresh one from the tray or a second launch.
 */
export function setupWindow({ create, url, onLoadError }: WindowDeps): MainWindow {
  let window: ElectronBrowserWindow | null = null;
  return {
    show() {
      if (window && !window.isDestroyed()) {
        if (window.isMinimized()) window.restore();
        window.show();
        window.focus();
        return;
      }
      const created = create();
      window = created;
      created.once('ready-to-show', () => created.show());
      created.on('closed', () => {
        if (window === created) window = null;
      });
      created.loadURL(url()).catch(onLoadError);
    },
    contents() {
      return window && !window.isDestroyed() ? window.webContents : null;
    },
    reload() {
      if (window && !window.isDestroyed()) window.loadURL(url()).catch(onLoadError);
    },
    present() {
      if (window && !window.isDestroyed() && window.webContents.getURL() !== url()) window.loadURL(url()).catch(onLoadError);
      this.show();
    },
  };
}
