import type { Session, WebContents } from 'electron';
import { describe, expect, it } from 'vitest';
import { isAppUrl } from '../../src/main/app-protocol.js';
import {
  CONTENT_SECURITY_POLICY,
  devContentSecurityPolicy,
  externalUrl,
  guardWebContents,
  hardenSession,
  isPermissionAllowed,
} from '../../src/main/security.js';
import { memoryLogger } from '../helpers/core.js';

const directives = (policy: string) => new Map(policy.split(';').map((part) => {
  const [name, ...values] = part.trim().split(/\s+/);
  return [name!, values] as const;
}));

describe('the Content-Security-Policy', () => {
  const policy = directives(CONTENT_SECURITY_POLICY);

  it('denies everything by default', () => {
    expect(policy.get('default-src')).toEqual(["'none'"]);
  });

  it('runs only the app’s own scripts: no inline script, no eval, no remote origin', () => {
    expect(policy.get('script-src')).toEqual(["'self'"]);
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-eval');
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/https?:|\*/);
  });

  it('leaves no channel out: connections, images and fonts stay on the app’s origin', () => {
    expect(policy.get('connect-src')).toEqual(["'self'"]);
    expect(policy.get('img-src')).toEqual(["'self'", 'data:']);
    expect(policy.get('font-src')).toEqual(["'self'", 'data:']);
  });

  it('forbids plugins, <base>, form posts and being framed', () => {
    expect(policy.get('object-src')).toEqual(["'none'"]);
    expect(policy.get('base-uri')).toEqual(["'none'"]);
    expect(policy.get('form-action')).toEqual(["'none'"]);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
    expect(policy.has('frame-src')).toBe(false); // falls back to default-src 'none'
  });

  it('is relaxed in development only for Vite’s inline preamble and its HMR socket', () => {
    const dev = directives(devContentSecurityPolicy('http://localhost:5173'));
    expect(dev.get('script-src')).toEqual(["'self'", "'unsafe-inline'"]);
    expect(dev.get('connect-src')).toEqual(["'self'", 'ws://localhost:5173']);
    expect(dev.get('default-src')).toEqual(["'none'"]);
  });
});

describe('externalUrl (what may go to the system browser)', () => {
  it('passes plain http(s) URLs, normalized by the URL parser', () => {
    expect(externalUrl('https://docs.github.com/webhooks')).toBe('https://docs.github.com/webhooks');
    expect(externalUrl('HTTP://Example.COM/a b')).toBe('http://example.com/a%20b');
  });

  it('refuses every other scheme and anything unparsable', () => {
    for (const url of ['file:///etc/passwd', 'smb://host/share', 'javascript:alert(1)', 'ms-msdt:/id', 'vscode://x', 'data:text/html,x', 'app://switchboard/index.html', '//evil.example', 'not a url', '']) {
      expect(externalUrl(url), url).toBeNull();
    }
  });

  it('refuses URLs with credentials (https://github.com@evil.example/)', () => {
    expect(externalUrl('https://github.com@evil.example/')).toBeNull();
    expect(externalUrl('https://user:pass@example.com/')).toBeNull();
  });
});

/** Enough of WebContents to capture the handlers guardWebContents installs. */
function fakeContents() {
  const listeners = new Map<string, (event: { url?: string; preventDefault(): void }) => void>();
  let openHandler: ((details: { url: string }) => { action: string }) | undefined;
  const contents = {
    on(name: string, listener: (event: { url?: string; preventDefault(): void }) => void) {
      listeners.set(name, listener);
      return contents;
    },
    setWindowOpenHandler(handler: (details: { url: string }) => { action: string }) {
      openHandler = handler;
    },
  };
  const fire = (name: string, url?: string) => {
    let prevented = false;
    listeners.get(name)!({ url, preventDefault: () => (prevented = true) });
    return prevented;
  };
  return { contents: contents as unknown as WebContents, listeners, fire, open: (url: string) => openHandler!({ url }) };
}

describe('guardWebContents', () => {
  const setup = () => {
    const opened: string[] = [];
    const logger = memoryLogger();
    const fake = fakeContents();
    guardWebContents(fake.contents, { openExternal: async (url) => void opened.push(url), logger });
    return { ...fake, opened, logger };
  };

  it('blocks every navigation of the window, and hands http(s) links to the system browser', () => {
    const { fire, opened } = setup();
    expect(fire('will-navigate', 'https://stripe.com/docs')).toBe(true);
    expect(fire('will-navigate', 'app://switchboard/other.html')).toBe(true);
    expect(fire('will-navigate', 'file:///etc/passwd')).toBe(true);
    expect(opened).toEqual(['https://stripe.com/docs']);
  });

  it('denies every new window; only parsed http(s) URLs are opened outside', () => {
    const { open, opened, logger } = setup();
    expect(open('https://github.com/settings/hooks')).toEqual({ action: 'deny' });
    expect(open('file:///C:/Windows/System32/calc.exe')).toEqual({ action: 'deny' });
    expect(open('javascript:alert(document.cookie)')).toEqual({ action: 'deny' });
    expect(opened).toEqual(['https://github.com/settings/hooks']);
    // The refused URL is not logged (it may carry a token from a payload), only its scheme.
    expect(logger.lines.join('\n')).toContain('file:');
    expect(logger.lines.join('\n')).not.toContain('calc.exe');
  });

  it('refuses to attach a <webview>', () => {
    const { fire } = setup();
    expect(fire('will-attach-webview')).toBe(true);
  });

  it('survives a browser that fails to open', async () => {
    const logger = memoryLogger();
    const fake = fakeContents();
    guardWebContents(fake.contents, { openExternal: () => Promise.reject(new Error('no browser')), logger });
    fake.open('https://example.com/');
    await new Promise((resolve) => setImmediate(resolve));
    expect(logger.lines.some((line) => line.includes('no browser'))).toBe(true);
  });
});

describe('permissions', () => {
  const ours = (url: string) => isAppUrl(url);

  it('grants only clipboard writes (the copy buttons), and only to our page', () => {
    expect(isPermissionAllowed('clipboard-sanitized-write', 'app://switchboard/index.html', ours)).toBe(true);
    expect(isPermissionAllowed('clipboard-sanitized-write', 'app://switchboard', ours)).toBe(true);
    expect(isPermissionAllowed('clipboard-sanitized-write', 'https://evil.example/', ours)).toBe(false);
    for (const permission of ['media', 'geolocation', 'notifications', 'openExternal', 'clipboard-read', 'fullscreen', 'hid', 'usb', 'serial', 'fileSystem', 'unknown']) {
      expect(isPermissionAllowed(permission, 'app://switchboard/index.html', ours), permission).toBe(false);
    }
  });

  it('hardenSession installs deny-by-default handlers and the CSP header', () => {
    let request: ((contents: unknown, permission: string, callback: (granted: boolean) => void, details: { requestingUrl: string }) => void) | undefined;
    let check: ((contents: unknown, permission: string, origin: string) => boolean) | undefined;
    let device: (() => boolean) | undefined;
    let display: ((request: unknown, callback: (streams: unknown) => void) => void) | undefined;
    let headers: ((details: { responseHeaders?: Record<string, string[]> }, callback: (response: { responseHeaders?: Record<string, string[]> }) => void) => void) | undefined;
    const session = {
      setPermissionRequestHandler: (handler: typeof request) => (request = handler),
      setPermissionCheckHandler: (handler: typeof check) => (check = handler),
      setDevicePermissionHandler: (handler: typeof device) => (device = handler),
      setDisplayMediaRequestHandler: (handler: typeof display) => (display = handler),
      webRequest: { onHeadersReceived: (handler: typeof headers) => (headers = handler) },
    };
    hardenSession(session as unknown as Session, { contentSecurityPolicy: CONTENT_SECURITY_POLICY, isAppUrl: ours });

    const answers: boolean[] = [];
    request!({}, 'media', (granted) => answers.push(granted), { requestingUrl: 'app://switchboard/index.html' });
    request!({}, 'clipboard-sanitized-write', (granted) => answers.push(granted), { requestingUrl: 'app://switchboard/index.html' });
    expect(answers).toEqual([false, true]);
    expect(check!({}, 'notifications', 'app://switchboard')).toBe(false);
    expect(check!({}, 'clipboard-sanitized-write', 'app://switchboard')).toBe(true);
    expect(device!()).toBe(false);
    let streams: unknown = 'unset';
    display!({}, (given) => (streams = given));
    expect(streams).toBeNull();

    let response: { responseHeaders?: Record<string, string[]> } | undefined;
    headers!({ responseHeaders: { 'content-type': ['text/html'] } }, (given) => (response = given));
    expect(response!.responseHeaders).toEqual({ 'content-type': ['text/html'], 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] });
  });
});
