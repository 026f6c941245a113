import { EventEmitter } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { App } from 'electron';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SwitchboardError } from '../../src/core/errors.js';
import { createSwitchboard } from '../../src/core/switchboard.js';
import { describeStartupFailure } from '../../src/main/error-screen.js';
import { fileLogger, setupQuit, startCore } from '../../src/main/lifecycle.js';
import { setupSingleInstance } from '../../src/main/single-instance.js';
import { createStartupScreen, startupPageHtml } from '../../src/main/startup-screen.js';
import { TEST_TOKEN, memoryLogger } from '../helpers/core.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchboard-lifecycle-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('startCore', () => {
  let busy: Server;
  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())));

  it('turns a port in use into a failure with the fix, for the error screen', async () => {
    const port = (busy.address() as { port: number }).port;
    const logger = memoryLogger();
    const started = await startCore(
      createSwitchboard,
      () => ({ dataDir: join(dir, 'busy'), databaseUrl: 'memory://', receiverPort: port, controlPort: 0, token: TEST_TOKEN, logger, rendererDir: null, env: {} }),
      join(dir, 'switchboard.log'),
      logger,
    );
    expect(started.ok).toBe(false);
    if (started.ok) return;
    expect(started.failure.code).toBe('port_in_use');
    expect(started.failure.message).toContain(String(port));
    expect(started.failure.hint).toBeTruthy();
    expect(logger.lines.some((line) => line.startsWith('error ') && line.includes('fix:'))).toBe(true);

    const screen = createStartupScreen({ dataDir: join(dir, 'busy'), configPath: join(dir, 'busy', 'config.json'), retry: () => {}, quit: () => {} });
    screen.failed(started.failure);
    const html = startupPageHtml(screen.view());
    expect(html).toContain('A port switchboard needs is already in use');
    expect(html).toContain(String(port));
  });

  it('turns a bad config.json into a failure naming the file and the JSON path', async () => {
    const dataDir = join(dir, 'bad-config');
    const logger = memoryLogger();
    await mkdir(dataDir, { recursive: true });
    await writeFile(join(dataDir, 'config.json'), JSON.stringify({ receiver: { port: 'seven' } }));
    const started = await startCore(createSwitchboard, () => ({ dataDir, logger, token: TEST_TOKEN, rendererDir: null, env: {} }), join(dir, 'switchboard.log'), logger);
    expect(started.ok).toBe(false);
    if (started.ok) return;
    expect(started.failure.code).toBe('config_invalid');
    expect(started.failure.message).toContain('receiver.port');
  });

  it('catches a failure while building the options (a damaged secrets file) too', async () => {
    const logger = memoryLogger();
    const started = await startCore(
      createSwitchboard,
      () => {
        throw new SwitchboardError('config_invalid', 'secrets.json is damaged', { hint: 'move it away' });
      },
      join(dir, 'switchboard.log'),
      logger,
    );
    expect(started).toMatchObject({ ok: false, failure: { code: 'config_invalid', message: 'secrets.json is damaged', hint: 'move it away' } });
  });
});

describe('describeStartupFailure', () => {
  it('shows an unexpected error with a pointer to the log', () => {
    expect(describeStartupFailure(new Error('boom'), '/logs/switchboard.log')).toEqual({
      code: 'internal',
      message: 'switchboard failed to start: boom',
      hint: 'the log has the details: /logs/switchboard.log',
    });
  });

  it('gives a database that cannot be opened a way forward when the core gave none, and keeps the core’s own', () => {
    expect(describeStartupFailure(new SwitchboardError('database_unavailable', 'the embedded database could not be opened: the database worker crashed: boom'), '/logs/switchboard.log')).toEqual({
      code: 'database_unavailable',
      message: 'the embedded database could not be opened: the database worker crashed: boom',
      hint: 'Try again. If it keeps failing, the log has the details: /logs/switchboard.log',
    });
    expect(describeStartupFailure(new SwitchboardError('database_unavailable', 'locked', { hint: 'quit the other switchboard' }), '/l.log').hint).toBe('quit the other switchboard');
  });
});

/** An app whose quit() emits will-quit like Electron's, and exits unless prevented. */
function fakeApp() {
  const app = new EventEmitter() as EventEmitter & { quits: number; exited: boolean; quit(): void };
  app.quits = 0;
  app.exited = false;
  app.quit = () => {
    app.quits++;
    let prevented = false;
    app.emit('will-quit', { preventDefault: () => (prevented = true) });
    if (!prevented) app.exited = true;
  };
  return app;
}

describe('setupQuit', () => {
  it('holds the quit until the core has stopped, then lets it through', async () => {
    const app = fakeApp();
    let finishStop!: () => void;
    let stops = 0;
    setupQuit(app as unknown as App, () => (stops++, new Promise<void>((resolve) => (finishStop = resolve))), memoryLogger(), new EventEmitter() as never);
    app.quit();
    expect(app.exited).toBe(false);
    app.quit(); // impatient second quit: still waiting, no second stop
    expect(stops).toBe(1);
    finishStop();
    await expect.poll(() => app.exited).toBe(true);
    expect(stops).toBe(1);
  });

  it('quits even when stopping fails, and logs why', async () => {
    const app = fakeApp();
    const logger = memoryLogger();
    setupQuit(app as unknown as App, () => Promise.reject(new Error('database would not close')), logger, new EventEmitter() as never);
    app.quit();
    await expect.poll(() => app.exited).toBe(true);
    expect(logger.lines).toContain('error shutdown: database would not close');
  });

  it('quits cleanly on SIGINT/SIGTERM (Ctrl+C under npm start)', async () => {
    const app = fakeApp();
    const signals = new EventEmitter();
    setupQuit(app as unknown as App, async () => undefined, memoryLogger(), signals as never);
    signals.emit('SIGTERM');
    await expect.poll(() => app.exited).toBe(true);
  });
});

describe('setupSingleInstance', () => {
  const app = (locked: boolean) => {
    const emitter = new EventEmitter() as EventEmitter & { quitCalled: boolean; requestSingleInstanceLock(): boolean; quit(): void };
    emitter.quitCalled = false;
    emitter.requestSingleInstanceLock = () => locked;
    emitter.quit = () => (emitter.quitCalled = true);
    return emitter;
  };

  it('makes a second launch quit at once', () => {
    const second = app(false);
    let shown = 0;
    expect(setupSingleInstance(second as unknown as App, () => shown++)).toBe(false);
    expect(second.quitCalled).toBe(true);
    expect(shown).toBe(0);
  });

  it('shows the first instance’s window when a second one is launched', () => {
    const first = app(true);
    let shown = 0;
    expect(setupSingleInstance(first as unknown as App, () => shown++)).toBe(true);
    expect(first.quitCalled).toBe(false);
    first.emit('second-instance', {}, ['switchboard'], '/');
    expect(shown).toBe(1);
  });
});

describe('fileLogger', () => {
  it('appends lines to the log file (user-readable only) and starts over past 5 MiB', async () => {
    const path = join(dir, 'logs', 'switchboard.log');
    const logger = fileLogger(path);
    logger.warn('first line');
    await expect.poll(async () => (await readFile(path, 'utf8').catch(() => '')).includes('warning: first line')).toBe(true);
    if (process.platform !== 'win32') expect((await stat(path)).mode & 0o777).toBe(0o600);

    await writeFile(path, 'x'.repeat(5 * 1024 * 1024 + 1));
    fileLogger(path).info('fresh start');
    await expect.poll(async () => (await readFile(path, 'utf8')).trim().endsWith('fresh start')).toBe(true);
    expect((await stat(path)).size).toBeLessThan(1000);
  });
});
