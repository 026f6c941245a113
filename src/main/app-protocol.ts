import { readFile } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { STARTUP_PAGE, type StartupResponse } from './startup-screen.js';

/**
 * Serves the built renderer on `app://switchboard/` instead of `file://`.
 *
 * Defends against: a page on file:// sharing an origin with every file on disk (Electron's
 * security checklist, item 18), and path traversal out of the renderer directory
 * (`app://switchboard/../../.ssh/id_rsa`, encoded or not). Every response carries the CSP, so
 * the policy does not depend on a meta tag the renderer build might drop.
 */

export const APP_SCHEME = 'app';
export const APP_HOST = 'switchboard';
export const APP_INDEX_URL = `${APP_SCHEME}://${APP_HOST}/index.html`;
export const STARTUP_URL = `${APP_SCHEME}://${APP_HOST}${STARTUP_PAGE}`;

/**
 * Registered before `ready`: `standard` gives the scheme a real origin (so relative URLs and
 * CSP `'self'` work), `secure` makes it a secure context, `supportFetchAPI`/`corsEnabled` let
 * Vite's `<script type="module" crossorigin>` load from it.
 */
export const APP_SCHEME_PRIVILEGES = {
  scheme: APP_SCHEME,
  privileges: { standard: true, secure: true, supportFetchAPI: true, corsEnabled: true },
} as const;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

/** True for URLs of our own renderer: `app://switchboard/…`, or the dev server in development. */
export function isAppUrl(raw: string, devServerUrl?: string): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  // Custom schemes have an opaque `origin` ("null") in WHATWG URL, so compare the parts.
  if (url.protocol === `${APP_SCHEME}:` && url.host === APP_HOST) return true;
  if (!devServerUrl) return false;
  const dev = new URL(devServerUrl);
  return url.protocol === dev.protocol && url.host === dev.host;
}

/**
 * The file under `rendererDir` a request maps to, or null when it would leave that directory.
 * Paths without an extension fall back to index.html so client-side routes survive a reload.
 */
export function resolveAppAsset(rendererDir: string, requestUrl: string): string | null {
  let url: URL;
  try {
    url = new URL(requestUrl);
  } catch {
    return null;
  }
  if (url.protocol !== `${APP_SCHEME}:` || url.host !== APP_HOST) return null;
  let pathname: string;
  try {
    pathname = decodeURIComponent(url.pathname);
  } catch {
    return null;
  }
  if (pathname.includes('\0')) return null;
  const root = resolve(rendererDir);
  const file = resolve(root, `.${pathname === '/' ? '/index.html' : pathname}`);
  const inside = relative(root, file);
  if (inside === '' || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) return null;
  return extname(file) === '' ? join(root, 'index.html') : file;
}

export interface AppProtocolOptions {
  rendererDir: string;
  contentSecurityPolicy: string;
  /** The start-up screen's page, script, state and actions (startup-screen.ts); null for anything else. */
  startup: (request: Request) => StartupResponse | null;
}

/** The `protocol.handle(APP_SCHEME, …)` handler; plain fetch Request → Response, so Node can test it. */
export function createAppProtocolHandler(options: AppProtocolOptions): (request: Request) => Promise<Response> {
  const headers = (type: string) => ({
    'content-type': type,
    'content-security-policy': options.contentSecurityPolicy,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-cache',
  });
  return async (request) => {
    const startup = isAppUrl(request.url) ? options.startup(request) : null;
    if (startup !== null) return new Response(startup.body, { status: startup.status, headers: headers(startup.type) });
    if (request.method !== 'GET' && request.method !== 'HEAD') return new Response(null, { status: 405 });
    const file = resolveAppAsset(options.rendererDir, request.url);
    if (file === null) return new Response('not found', { status: 404 });
    try {
      const body = await readFile(file);
      return new Response(body, { headers: headers(CONTENT_TYPES[extname(file)] ?? 'application/octet-stream') });
    } catch {
      return new Response('not found', { status: 404 });
    }
  };
}
