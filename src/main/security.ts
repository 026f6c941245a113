import type { Session, WebContents } from 'electron';
import type { Logger } from '../core/logger.js';

/**
 * What the window may do beyond showing our UI: as little as possible.
 *
 * Defends against: webhook payloads are written by whoever can reach the tunnel, and the UI
 * renders them. If one of them ever slips markup or script past React, or simply contains a
 * link, it must not be able to load code from elsewhere (CSP), navigate the window away from
 * our UI (where the preload's API would serve a foreign page), open windows, get a permission
 * (camera, notifications, USB, …), or hand a `file:`/`smb:`/custom-scheme URL to the OS.
 */

/**
 * Scripts only from the app itself (no inline script, no eval); no network but the app's own
 * origin; no frames, plugins, forms or <base>. Inline *styles* are allowed to match the web UI
 * the control port serves (the same renderer): with images, fonts and connections limited to
 * 'self', injected CSS has no channel to send anything out.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Development only (`electron-vite dev`, never packaged): Vite's dev server injects an inline
 * React-refresh preamble and talks to its HMR websocket.
 */
export function devContentSecurityPolicy(devServerUrl: string): string {
  const dev = new URL(devServerUrl);
  const ws = `${dev.protocol === 'https:' ? 'wss' : 'ws'}://${dev.host}`;
  return CONTENT_SECURITY_POLICY.replace("script-src 'self'", "script-src 'self' 'unsafe-inline'").replace(
    "connect-src 'self'",
    `connect-src 'self' ${ws}`,
  );
}

/** An http(s) URL worth handing to the system browser, normalized; anything else → null. */
export function externalUrl(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  // A URL with credentials is a classic phishing disguise (https://github.com@evil.example/).
  if (url.username !== '' || url.password !== '') return null;
  return url.href;
}

function schemeOf(raw: string): string {
  const match = /^([a-z][a-z0-9+.-]*):/i.exec(raw);
  return match ? `${match[1]}:` : 'not a URL';
}

export interface GuardOptions {
  openExternal: (url: string) => Promise<void>;
  logger: Logger;
}

/**
 * Every web contents the app creates: no navigation away from the loaded page, no new windows,
 * no <webview>. A link the user clicks opens in the system browser when it is plain http(s).
 */
export function guardWebContents(contents: WebContents, { openExternal, logger }: GuardOptions): void {
  const handOff = (raw: string) => {
    const url = externalUrl(raw);
    if (url === null) {
      // Only the scheme: the URL itself may carry a token from a payload.
      logger.warn(`blocked a link that is not plain http(s) (${schemeOf(raw)})`);
      return;
    }
    openExternal(url).catch((error: Error) => logger.warn(`could not open the browser: ${error.message}`));
  };
  contents.on('will-navigate', (event) => {
    event.preventDefault();
    handOff(event.url);
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    handOff(url);
    return { action: 'deny' };
  });
}

/**
 * The one permission granted: writing to the clipboard (the copy buttons use
 * `navigator.clipboard.writeText`), and only to our own page. Everything else is denied.
 */
export function isPermissionAllowed(permission: string, requestingUrl: string, isAppUrl: (url: string) => boolean): boolean {
  return permission === 'clipboard-sanitized-write' && isAppUrl(requestingUrl);
}

export interface SessionOptions {
  contentSecurityPolicy: string;
  isAppUrl: (url: string) => boolean;
}

export function hardenSession(session: Session, { contentSecurityPolicy, isAppUrl }: SessionOptions): void {
  session.setPermissionRequestHandler((_contents, permission, callback, details) =>
    callback(isPermissionAllowed(permission, details.requestingUrl, isAppUrl)),
  );
  session.setPermissionCheckHandler((_contents, permission, requestingOrigin) => isPermissionAllowed(permission, requestingOrigin, isAppUrl));
  session.setDevicePermissionHandler(() => false);
  session.setDisplayMediaRequestHandler((_request, callback) => callback(null));
  // app:// responses carry the CSP themselves (app-protocol.ts); this covers http(s) responses,
  // which in practice means the dev server.
  session.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [contentSecurityPolicy] } });
  });
}
