import { EventEmitter } from 'node:events';
import type { BrowserWindowConstructorOptions } from 'electron';

/**
 * A stand-in for the `electron` module, for running src/main/index.ts in plain Node (the
 * Electron binary cannot be downloaded here). It records what the shell asks of Electron and
 * lets a test drive the app's lifecycle: ready, window closed, second launch, quit. It stands
 * in for Electron only; everything of ours runs for real behind it.
 */

export const state = {
  paths: {} as Record<string, string>,
  privilegedSchemes: [] as unknown[],
  protocolHandlers: new Map<string, (request: Request) => Promise<Response>>(),
  ipcHandlers: new Map<string, (event: unknown, ...args: unknown[]) => Promise<unknown>>(),
  windows: [] as FakeBrowserWindow[],
  trays: [] as FakeTray[],
  opened: [] as string[],
  exited: false,
  permissionRequestHandler: undefined as unknown,
  headersHandler: undefined as unknown,
};

let markReady!: () => void;
const ready = new Promise<void>((resolve) => (markReady = resolve));

class FakeApp extends EventEmitter {
  isPackaged = false;
  getPath(name: string) {
    const path = state.paths[name];
    if (!path) throw new Error(`fake electron: no path for ${name}`);
    return path;
  }
  requestSingleInstanceLock() {
    return true;
  }
  whenReady() {
    return ready;
  }
  /** Electron's order: will-quit, which a listener may prevent; otherwise the process ends. */
  quit() {
    let prevented = false;
    this.emit('will-quit', { preventDefault: () => (prevented = true) });
    if (!prevented) state.exited = true;
  }
  /** Test hook: the 'ready' event. */
  becomeReady() {
    markReady();
  }
}

export const app = new FakeApp();

let nextContentsId = 1;

export class FakeWebContents extends EventEmitter {
  readonly id = nextContentsId++;
  url = '';
  sent: { channel: string; message: unknown }[] = [];
  destroyed = false;
  windowOpenHandler: ((details: { url: string }) => { action: string }) | undefined;
  isDestroyed() {
    return this.destroyed;
  }
  getURL() {
    return this.url;
  }
  send(channel: string, message: unknown) {
    this.sent.push({ channel, message: structuredClone(message) });
  }
  setWindowOpenHandler(handler: (details: { url: string }) => { action: string }) {
    this.windowOpenHandler = handler;
  }
}

export class FakeBrowserWindow extends EventEmitter {
  readonly webContents = new FakeWebContents();
  loaded: string[] = [];
  visible = false;
  destroyed = false;
  constructor(readonly options: BrowserWindowConstructorOptions) {
    super();
    state.windows.push(this);
    app.emit('web-contents-created', {}, this.webContents);
  }
  async loadURL(url: string) {
    this.loaded.push(url);
    this.webContents.url = url;
    queueMicrotask(() => this.emit('ready-to-show'));
  }
  show() {
    this.visible = true;
  }
  focus() {}
  restore() {}
  isMinimized() {
    return false;
  }
  isDestroyed() {
    return this.destroyed;
  }
  /** Test hook: the user closes the window. */
  close() {
    this.destroyed = true;
    this.webContents.destroyed = true;
    this.emit('closed');
    if (state.windows.every((window) => window.destroyed)) app.emit('window-all-closed');
  }
}
export { FakeBrowserWindow as BrowserWindow };

export class FakeTray extends EventEmitter {
  tooltip = '';
  menu: unknown;
  destroyed = false;
  constructor(readonly icon: unknown) {
    super();
    state.trays.push(this);
  }
  setToolTip(text: string) {
    this.tooltip = text;
  }
  setContextMenu(menu: unknown) {
    this.menu = menu;
  }
  destroy() {
    this.destroyed = true;
  }
}
export { FakeTray as Tray };

export const ipcMain = {
  handle: (channel: string, handler: (event: unknown, ...args: unknown[]) => Promise<unknown>) => {
    if (state.ipcHandlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    state.ipcHandlers.set(channel, handler);
  },
  removeHandler: (channel: string) => state.ipcHandlers.delete(channel),
};

export const protocol = {
  registerSchemesAsPrivileged: (schemes: unknown[]) => state.privilegedSchemes.push(...schemes),
  handle: (scheme: string, handler: (request: Request) => Promise<Response>) => state.protocolHandlers.set(scheme, handler),
};

export const session = {
  defaultSession: {
    setPermissionRequestHandler: (handler: unknown) => (state.permissionRequestHandler = handler),
    setPermissionCheckHandler: () => undefined,
    setDevicePermissionHandler: () => undefined,
    setDisplayMediaRequestHandler: () => undefined,
    webRequest: { onHeadersReceived: (handler: unknown) => (state.headersHandler = handler) },
  },
};

export const Menu = { buildFromTemplate: (template: unknown) => ({ template }) };
export const nativeImage = { createFromPath: (path: string) => ({ path }) };
export const shell = {
  openExternal: async (url: string) => {
    state.opened.push(url);
  },
};

/** Reversible "encryption", enough for the vault to run; its own tests use real AES. */
export const safeStorage = {
  isEncryptionAvailable: () => true,
  encryptString: (text: string) => Buffer.from(text, 'utf8').reverse(),
  decryptString: (data: Buffer) => Buffer.from(data).reverse().toString('utf8'),
  getSelectedStorageBackend: () => 'gnome_libsecret',
};
