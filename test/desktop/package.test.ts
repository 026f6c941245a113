import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { listPackage } from '@electron/asar';
import { FuseV1Options, getCurrentFuseWire } from '@electron/fuses';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_TIMEOUT_MS, appEnv, ARTIFACTS, DESKTOP_TOKEN, desktopSuiteRuns, newUserData, ROOT, within } from './electron-app.js';

/**
 * The packaged app as electron-builder makes it (`electron-builder --dir`, which
 * `npm run test:desktop -- --package` runs first): its binary carries the fuses of
 * electron-builder.yml, its code is the app.asar (and nothing loose beside it), and it starts —
 * database worker from the unpacked PGlite, both ports answering, the window on the UI.
 * Playwright's launcher cannot drive it (it needs the Node inspector, which the
 * enableNodeCliInspectArguments fuse turns off), so it is started as a user starts it and looked
 * at from outside: its ports, its control API, and its window over Chromium's DevTools protocol.
 */

const run = desktopSuiteRuns();
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const RELEASE = join(ROOT, 'release', version);
const REQUIRED = process.env.SWITCHBOARD_DESKTOP_PACKAGE === '1';

/** The unpacked app for this OS: its executable and its resources folder. */
function unpacked(): { executable: string; resources: string } | null {
  if (!existsSync(RELEASE)) return null;
  for (const dir of readdirSync(RELEASE)) {
    const base = join(RELEASE, dir);
    if (process.platform === 'darwin' && /^mac/.test(dir)) {
      const app = readdirSync(base).find((name) => name.endsWith('.app'));
      if (app) return { executable: join(base, app, 'Contents', 'MacOS', app.replace(/\.app$/, '')), resources: join(base, app, 'Contents', 'Resources') };
    }
    if (process.platform === 'win32' && dir === 'win-unpacked') return { executable: join(base, 'switchboard.exe'), resources: join(base, 'resources') };
    if (process.platform === 'linux' && dir === 'linux-unpacked') return { executable: join(base, 'switchboard'), resources: join(base, 'resources') };
  }
  return null;
}

const found = run ? unpacked() : null;
if (run && !found) {
  if (REQUIRED) throw new Error(`no unpacked package in ${RELEASE} although test:desktop --package built one`);
  process.stderr.write(`\n!!! SKIPPING the packaged-app test: no unpacked package in ${RELEASE} (npm run test:desktop -- --package builds it) !!!\n\n`);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function until<T>(read: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + APP_TIMEOUT_MS;
  for (;;) {
    const value = await read().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${APP_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe.runIf(run && found !== null)('the packaged app', { timeout: 180_000 }, () => {
  const { executable, resources } = found ?? { executable: '', resources: '' };
  const sandbox = process.platform === 'linux' ? ['--no-sandbox'] : [];
  let userData: string;
  let child: ChildProcess;
  let output = '';
  let receiver: string;
  let control: string;
  let browser: Browser | undefined;

  beforeAll(async () => {
    const [receiverPort, controlPort] = [await freePort(), await freePort()];
    receiver = `http://127.0.0.1:${receiverPort}`;
    control = `http://127.0.0.1:${controlPort}`;
    userData = await newUserData({ receiver: { port: receiverPort }, control: { port: controlPort }, providers: [{ name: 'homelab', kind: 'open' }] });
    // --remote-debugging-port is Chromium's, not a fuse-guarded Node switch: it lets the test see the window.
    child = spawn(executable, [...sandbox, `--user-data-dir=${userData}`, '--remote-debugging-port=0'], { env: appEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  });
  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill();
      await within(exited, 30_000, 'the packaged app exiting').catch(() => child.kill('SIGKILL'));
    }
    const { mkdir, writeFile } = await import('node:fs/promises');
    await mkdir(ARTIFACTS, { recursive: true });
    await writeFile(join(ARTIFACTS, 'package.log'), output).catch(() => undefined);
    // Windows may still hold a file of the killed app for a moment; a temp folder left on a runner is harmless.
    if (userData) await rm(userData, { recursive: true, force: true, maxRetries: 5 }).catch(() => undefined);
  });

  it('carries the fuses electron-builder.yml sets', async () => {
    const require = createRequire(join(ROOT, 'package.json'));
    const { getConfig } = require('app-builder-lib/out/util/config/config') as { getConfig: (dir: string, path: null, options: null) => Promise<{ electronFuses: Record<string, boolean> }> };
    const { electronFuses } = await getConfig(ROOT, null, null);
    const wire = await getCurrentFuseWire(executable);
    const byName: Record<string, FuseV1Options> = {
      runAsNode: FuseV1Options.RunAsNode,
      enableCookieEncryption: FuseV1Options.EnableCookieEncryption,
      enableNodeOptionsEnvironmentVariable: FuseV1Options.EnableNodeOptionsEnvironmentVariable,
      enableNodeCliInspectArguments: FuseV1Options.EnableNodeCliInspectArguments,
      enableEmbeddedAsarIntegrityValidation: FuseV1Options.EnableEmbeddedAsarIntegrityValidation,
      onlyLoadAppFromAsar: FuseV1Options.OnlyLoadAppFromAsar,
      grantFileProtocolExtraPrivileges: FuseV1Options.GrantFileProtocolExtraPrivileges,
    };
    const ENABLED = 49; // '1' in the binary's fuse wire; '0' (48) is disabled
    expect(Object.keys(electronFuses).sort()).toEqual(Object.keys(byName).sort());
    for (const [name, wanted] of Object.entries(electronFuses)) expect({ name, enabled: wire[byName[name]!] === ENABLED }).toEqual({ name, enabled: wanted });
  });

  it('holds its code in app.asar only, with PGlite unpacked beside it', () => {
    expect(existsSync(join(resources, 'app'))).toBe(false);
    const files = listPackage(join(resources, 'app.asar'), { isPack: false }).map((file) => file.replace(/\\/g, '/'));
    expect(files).toEqual(expect.arrayContaining(['/package.json', '/out/main/index.js', '/out/preload/index.cjs', '/out/renderer/index.html', '/dist/pgdata-template.tar.gz']));
    expect(files.some((file) => file.startsWith('/src/'))).toBe(false);
    expect(existsSync(join(resources, 'app.asar.unpacked', 'node_modules', '@electric-sql', 'pglite', 'package.json'))).toBe(true);
  });

  it('starts: the database opens in its worker, both ports answer, the control API is this version', async () => {
    await until(async () => ((await fetch(`${receiver}/healthz`)).status === 200 ? true : undefined), 'the receiver answering');
    expect((await fetch(`${control}/healthz`)).status).toBe(200);
    const answer = await fetch(`${control}/api/getServerInfo`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json', authorization: `Bearer ${DESKTOP_TOKEN}` } });
    expect(answer.status).toBe(200);
    const served = (await answer.json()) as { version: string; receiver_url: string; data_dir: string };
    expect(served).toMatchObject({ version, receiver_url: receiver });
    expect(realpathSync(served.data_dir)).toBe(realpathSync(userData));
    expect((await fetch(`${receiver}/webhooks/homelab`, { method: 'POST', body: '{"type":"packaged.hello"}', headers: { 'content-type': 'application/json' } })).status).toBe(200);
  });

  it('shows the UI in its window', async () => {
    // Where DevTools listens: Chromium's DevToolsActivePort file in the user data folder, or its line on stderr.
    const endpoint = await until(async () => {
      const printed = /DevTools listening on (ws:\/\/\S+)/.exec(output)?.[1];
      if (printed) return printed;
      const port = (await readFile(join(userData, 'DevToolsActivePort'), 'utf8')).split('\n')[0];
      return port ? `http://127.0.0.1:${port}` : undefined;
    }, 'the DevTools endpoint');
    browser = await chromium.connectOverCDP(endpoint);
    const page = await until(async () => browser!.contexts().flatMap((context) => context.pages()).find((candidate) => candidate.url().startsWith('app://switchboard/index.html')), 'the UI page');
    await page.getByRole('option', { name: /homelab packaged\.hello/ }).waitFor({ timeout: APP_TIMEOUT_MS });
    expect(await page.title()).toBe('Events · switchboard');
  });

  it('ignores ELECTRON_RUN_AS_NODE (runAsNode fuse off): it is the app again, which hands over to this one and exits', async () => {
    const asNode = spawn(executable, [...sandbox, `--user-data-dir=${userData}`, '-e', 'process.stdout.write("ran as node")'], { env: { ...appEnv(), ELECTRON_RUN_AS_NODE: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let printed = '';
    asNode.stdout!.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk));
    asNode.stderr!.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk));
    const code = await within(new Promise<number | null>((resolve) => asNode.on('exit', resolve)), APP_TIMEOUT_MS, 'the second launch exiting');
    expect(printed).not.toContain('ran as node');
    expect(code).toBe(0);
    expect(child.exitCode).toBeNull();
  });
});
