import { EventEmitter } from 'node:events';
import type { BrowserWindow, BrowserWindowConstructorOptions } from 'electron';
import { describe, expect, it } from 'vitest';
import { createMainWindow, setupWindow, type BrowserWindowClass } from '../../src/main/window.js';

/** Records what Electron's BrowserWindow would have been given, and enough behaviour for setupWindow. */
class FakeWindow extends EventEmitter {
  static created: FakeWindow[] = [];
  loaded: string[] = [];
  shown = 0;
  focused = 0;
  restored = 0;
  minimized = false;
  destroyed = false;
  readonly webContents = { id: FakeWindow.created.length + 1, getURL: () => this.loaded.at(-1) ?? '' };
  constructor(readonly options: BrowserWindowConstructorOptions) {
    super();
    FakeWindow.created.push(this);
  }
  loadURL(url: string) {
    this.loaded.push(url);
    return Promise.resolve();
  }
  show() {
    this.shown++;
  }
  focus() {
    this.focused++;
  }
  restore() {
    this.restored++;
    this.minimized = false;
  }
  isMinimized() {
    return this.minimized;
  }
  isDestroyed() {
    return this.destroyed;
  }
  close() {
    this.destroyed = true;
    this.emit('closed');
  }
}
const FakeBrowserWindow = FakeWindow as unknown as BrowserWindowClass;

describe('the BrowserWindow options', () => {
  const window = createMainWindow(FakeBrowserWindow, { preloadPath: '/app/out/preload/index.cjs' }) as unknown as FakeWindow;
  const prefs = window.options.webPreferences!;

  it('isolate the page: context isolation, the sandbox, no Node anywhere', () => {
    expect(prefs.contextIsolation).toBe(true);
    expect(prefs.sandbox).toBe(true);
    expect(prefs.nodeIntegration).toBe(false);
    expect(prefs.nodeIntegrationInWorker).toBe(false);
    expect(prefs.nodeIntegrationInSubFrames).toBe(false);
  });

  it('keep web security on and the risky extras off', () => {
    expect(prefs.webSecurity).toBe(true);
    expect(prefs.allowRunningInsecureContent).toBe(false);
    expect(prefs.webviewTag).toBe(false);
    expect(prefs.experimentalFeatures).toBe(false);
    expect(prefs.navigateOnDragDrop).toBe(false);
    expect(prefs.disableBlinkFeatures).toBe('Auxclick');
    expect(prefs).not.toHaveProperty('enableBlinkFeatures');
    expect(prefs).not.toHaveProperty('additionalArguments');
  });

  it('load the CommonJS preload (a sandboxed preload cannot be ESM)', () => {
    expect(prefs.preload).toBe('/app/out/preload/index.cjs');
    expect(prefs.preload).toMatch(/\.cjs$/);
  });

  it('stay hidden until the first paint', () => {
    expect(window.options.show).toBe(false);
  });
});

describe('setupWindow', () => {
  const make = (url = 'app://switchboard/index.html') => {
    FakeWindow.created = [];
    const errors: Error[] = [];
    let target = url;
    const main = setupWindow({
      create: () => createMainWindow(FakeBrowserWindow, { preloadPath: '/p.cjs' }),
      url: () => target,
      onLoadError: (error) => errors.push(error),
    });
    return { main, errors, setUrl: (next: string) => (target = next) };
  };

  it('creates the window on first show and shows it once it has painted', () => {
    const { main } = make();
    expect(main.contents()).toBeNull();
    main.show();
    const [window] = FakeWindow.created;
    expect(window!.loaded).toEqual(['app://switchboard/index.html']);
    expect(window!.shown).toBe(0);
    window!.emit('ready-to-show');
    expect(window!.shown).toBe(1);
    expect(main.contents()).toBe(window!.webContents);
  });

  it('focuses (and restores) the open window instead of opening a second one', () => {
    const { main } = make();
    main.show();
    const [window] = FakeWindow.created;
    window!.minimized = true;
    main.show();
    expect(FakeWindow.created).toHaveLength(1);
    expect(window!.restored).toBe(1);
    expect(window!.focused).toBe(1);
  });

  it('builds a new window after the last one was closed (the core kept running meanwhile)', () => {
    const { main } = make();
    main.show();
    FakeWindow.created[0]!.close();
    expect(main.contents()).toBeNull();
    main.show();
    expect(FakeWindow.created).toHaveLength(2);
    expect(main.contents()).toBe(FakeWindow.created[1]!.webContents);
  });

  it('reload() loads the current URL again, e.g. the UI once the start-up screen is done', () => {
    const { main, setUrl } = make('app://switchboard/startup.html');
    main.show();
    setUrl('app://switchboard/index.html');
    main.reload();
    expect(FakeWindow.created[0]!.loaded).toEqual(['app://switchboard/startup.html', 'app://switchboard/index.html']);
  });

  it('present() shows the current URL whatever the window showed: the open one loads it (once) and comes forward, a closed one is rebuilt', () => {
    const { main, setUrl } = make('app://switchboard/index.html');
    main.show();
    const [first] = FakeWindow.created;
    setUrl('app://switchboard/startup.html');
    main.present();
    main.present(); // already showing it: not loaded again
    expect(FakeWindow.created).toHaveLength(1);
    expect(first!.loaded).toEqual(['app://switchboard/index.html', 'app://switchboard/startup.html']);
    expect(first!.focused).toBe(2);
    first!.close();
    main.present();
    expect(FakeWindow.created).toHaveLength(2);
    expect(FakeWindow.created[1]!.loaded).toEqual(['app://switchboard/startup.html']);
  });

  it('reports a page that fails to load', async () => {
    FakeWindow.created = [];
    const errors: Error[] = [];
    const main = setupWindow({
      create: () => {
        const window = createMainWindow(FakeBrowserWindow, { preloadPath: '/p.cjs' }) as unknown as FakeWindow;
        window.loadURL = () => Promise.reject(new Error('ERR_FILE_NOT_FOUND'));
        return window as unknown as BrowserWindow;
      },
      url: () => 'app://switchboard/index.html',
      onLoadError: (error) => errors.push(error),
    });
    main.show();
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors.map((error) => error.message)).toEqual(['ERR_FILE_NOT_FOUND']);
  });
});
