import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_SCHEME_PRIVILEGES, STARTUP_URL, createAppProtocolHandler, isAppUrl, resolveAppAsset } from '../../src/main/app-protocol.js';
import { CONTENT_SECURITY_POLICY } from '../../src/main/security.js';
import { createStartupScreen } from '../../src/main/startup-screen.js';

let root: string;
let rendererDir: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'switchboard-app-protocol-'));
  rendererDir = join(root, 'renderer');
  await mkdir(join(rendererDir, 'assets'), { recursive: true });
  await writeFile(join(rendererDir, 'index.html'), '<!doctype html><div id="root"></div>');
  await writeFile(join(rendererDir, 'assets', 'index-abc.js'), 'console.log(1)');
  await writeFile(join(root, 'secret.txt'), 'outside the renderer');
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe('isAppUrl', () => {
  it('recognizes our own origin and nothing that merely looks like it', () => {
    expect(isAppUrl('app://switchboard/index.html')).toBe(true);
    expect(isAppUrl('app://switchboard')).toBe(true);
    expect(isAppUrl('app://switchboard.evil/index.html')).toBe(false);
    expect(isAppUrl('app://evil/index.html')).toBe(false);
    expect(isAppUrl('https://switchboard/index.html')).toBe(false);
    expect(isAppUrl('file:///app/out/renderer/index.html')).toBe(false);
    expect(isAppUrl('http://localhost:5173/')).toBe(false);
    expect(isAppUrl('garbage')).toBe(false);
  });

  it('accepts the dev server only when one is given, and only its exact origin', () => {
    expect(isAppUrl('http://localhost:5173/', 'http://localhost:5173')).toBe(true);
    expect(isAppUrl('http://localhost:5174/', 'http://localhost:5173')).toBe(false);
    expect(isAppUrl('https://localhost:5173/', 'http://localhost:5173')).toBe(false);
  });

  it('registers a standard, secure scheme (real origin for CSP self), without bypassing CSP', () => {
    expect(APP_SCHEME_PRIVILEGES.privileges).toMatchObject({ standard: true, secure: true });
    expect(APP_SCHEME_PRIVILEGES.privileges).not.toHaveProperty('bypassCSP');
  });
});

describe('resolveAppAsset', () => {
  it('maps URLs to files inside the renderer directory', () => {
    expect(resolveAppAsset(rendererDir, 'app://switchboard/')).toBe(join(rendererDir, 'index.html'));
    expect(resolveAppAsset(rendererDir, 'app://switchboard/assets/index-abc.js')).toBe(join(rendererDir, 'assets', 'index-abc.js'));
    expect(resolveAppAsset(rendererDir, 'app://switchboard/providers')).toBe(join(rendererDir, 'index.html'));
  });

  it('refuses to leave it, however the path is spelled', () => {
    for (const url of [
      'app://switchboard/../secret.txt',
      'app://switchboard/%2e%2e/secret.txt',
      'app://switchboard/assets/%2E%2E%2F..%2Fsecret.txt',
      'app://switchboard/..%5Csecret.txt',
      'app://switchboard/%00index.html',
      'app://switchboard/%E0%A4%A',
      'app://other/index.html',
      'https://switchboard/index.html',
    ]) {
      const file = resolveAppAsset(rendererDir, url);
      expect(file === null || file.startsWith(rendererDir + (process.platform === 'win32' ? '\\' : '/')), `${url} → ${file}`).toBe(true);
      expect(file, url).not.toBe(join(root, 'secret.txt'));
    }
    // The URL parser already folds %2e%2e into a dot segment; what it leaves encoded, we catch.
    expect(resolveAppAsset(rendererDir, 'app://switchboard/%2e%2e/secret.txt')).toBe(join(rendererDir, 'secret.txt'));
    expect(resolveAppAsset(rendererDir, 'app://switchboard/assets/%2E%2E%2F..%2Fsecret.txt')).toBeNull();
    expect(resolveAppAsset(rendererDir, 'app://other/index.html')).toBeNull();
  });
});

describe('the app:// handler', () => {
  const screen = createStartupScreen({ dataDir: '/data', configPath: '/data/config.json', retry: () => {}, quit: () => {} });
  const handle = () => createAppProtocolHandler({ rendererDir, contentSecurityPolicy: CONTENT_SECURITY_POLICY, startup: screen.respond });

  it('serves the renderer with its type, nosniff and the CSP on every response', async () => {
    const page = await handle()(new Request('app://switchboard/index.html'));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await page.text()).toContain('<div id="root">');

    const script = await handle()(new Request('app://switchboard/assets/index-abc.js'));
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
  });

  it('answers 404 for missing files and traversal attempts, 405 for anything but GET/HEAD', async () => {
    expect((await handle()(new Request('app://switchboard/assets/missing.js'))).status).toBe(404);
    expect((await handle()(new Request('app://switchboard/assets/%2E%2E%2F..%2Fsecret.txt'))).status).toBe(404);
    expect((await handle()(new Request('app://switchboard/%2e%2e/secret.txt'))).status).toBe(404);
    expect((await handle()(new Request('app://switchboard/index.html', { method: 'POST', body: 'x' }))).status).toBe(405);
  });

  it('serves the start-up screen (page, script, state) with the CSP, and nothing of it on other origins', async () => {
    screen.failed({ code: 'port_in_use', message: 'port 7777 is in use', hint: 'stop the other program' });
    const page = await handle()(new Request(STARTUP_URL));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await page.text()).toContain('port 7777 is in use');
    for (const path of ['startup.js', 'startup/state']) {
      const response = await handle()(new Request(`app://switchboard/${path}`));
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-security-policy'), path).toBe(CONTENT_SECURITY_POLICY);
    }
    expect((await handle()(new Request('app://other/startup.html'))).status).toBe(404);
  });
});
