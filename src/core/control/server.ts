import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import type { Logger } from '../logger.js';
import { decodePathComponent, listen, requestUrl } from '../net.js';
import { checkBearer, IDENTITY_NONCE, identityProof, isLoopbackHost, isLoopbackOrigin } from './auth.js';

/**
 * The control port: MCP (`/mcp`), the UI API (`/api`) and the web UI (`/`), bound to
 * loopback only. Every request passes the Host and Origin checks (auth.ts says why); every
 * mounted route except the static UI also needs the bearer token. The static UI is public
 * code; it gets the token from the URL fragment, which browsers never send to a server.
 */

export type ControlHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> | void;

export interface ControlOptions {
  host: string;
  port: number;
  token: string;
  /** The data dir's identity key: `GET /identity` proves this instance knows it (auth.ts). */
  identityKey?: string;
  rendererDir: string | null;
  logger: Logger;
  /** Why deliveries cannot be stored right now (GET /healthz answers 503 with it), or null. */
  unhealthy?: () => Promise<string | null>;
}

const STATIC_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

/** The web UI's CSP: same-origin scripts and connections only. */
const UI_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'";

const TOKEN_SOURCE = 'the control-token file in the data dir, or SWITCHBOARD_TOKEN';

const BEARER_REFUSALS = {
  missing: { reason: 'token_missing', message: `no bearer token was sent: add "Authorization: Bearer <token>" (the token is in ${TOKEN_SOURCE})` },
  malformed: { reason: 'token_malformed', message: 'the Authorization header is not "Bearer <token>"' },
  wrong: {
    reason: 'token_wrong',
    message: `the bearer token is wrong: it is not the one this switchboard uses (copy it again from ${TOKEN_SOURCE}; the Connect screen shows the current one). There is no OAuth login.`,
  },
} as const;

const WELL_KNOWN_MESSAGE =
  'switchboard has no OAuth or other /.well-known metadata: authenticate with a static bearer token (Authorization: Bearer <token from the control-token file>)';

export function sendJson(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...extra,
  });
  res.end(text);
}

export class ControlServer {
  private server: Server | undefined;
  private readonly mounts: { prefix: string; handler: ControlHandler }[] = [];

  constructor(private options: ControlOptions) {}

  /** Replaces the bearer token at once (a control-token file rotated by hand): the old one stops working. */
  setToken(token: string): void {
    this.options = { ...this.options, token };
  }

  /** Routes under `prefix` (exact or followed by "/") require the bearer token. */
  mount(prefix: string, handler: ControlHandler): void {
    this.mounts.push({ prefix, handler });
    this.mounts.sort((a, b) => b.prefix.length - a.prefix.length);
  }

  async start(): Promise<AddressInfo> {
    const server = createServer({ requestTimeout: 0, headersTimeout: 30_000 }, (req, res) => {
      Promise.resolve(this.handle(req, res)).catch((error) => {
        this.options.logger.error(`control: ${(error as Error).message}`);
        if (!res.headersSent) sendJson(res, 500, { error: 'internal', message: 'internal error' });
        else res.destroy();
      });
    });
    this.server = server;
    return listen(server, this.options.host, this.options.port, 'control');
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      // Long-lived streams (SSE, MCP GET streams) would otherwise hold shutdown forever.
      server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!isLoopbackHost(req.rawHeaders)) {
      return sendJson(res, 403, { error: 'forbidden', message: 'Host must be one loopback name (127.0.0.1, localhost or [::1]) with an optional port' });
    }
    if (!isLoopbackOrigin(req.rawHeaders)) {
      return sendJson(res, 403, { error: 'forbidden', message: 'cross-origin requests are not allowed' });
    }
    const url = requestUrl(req);
    if (!url) return sendJson(res, 400, { error: 'invalid_argument', message: 'the request target must be a path starting with "/"' });
    if (url.pathname === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) {
      const reason = (await this.options.unhealthy?.()) ?? null;
      return reason ? sendJson(res, 503, { status: 'unhealthy', reason }) : sendJson(res, 200, { status: 'ok' });
    }
    if (url.pathname === '/identity' && req.method === 'GET') return this.answerIdentity(res, url);
    if (url.pathname === '/.well-known' || url.pathname.startsWith('/.well-known/')) {
      // MCP clients probe OAuth metadata here after a 401; "none" must not look like the UI's HTML.
      return sendJson(res, 404, { error: 'not_found', message: WELL_KNOWN_MESSAGE });
    }
    const mount = this.mounts.find(({ prefix }) => url.pathname === prefix || url.pathname.startsWith(`${prefix}/`));
    if (mount) {
      const bearer = checkBearer(req.headers.authorization, this.options.token);
      if (bearer !== 'ok') {
        const refusal = BEARER_REFUSALS[bearer];
        return sendJson(
          res,
          401,
          { error: 'unauthorized', reason: refusal.reason, message: refusal.message },
          {
            'www-authenticate':
              bearer === 'missing' ? 'Bearer realm="switchboard"' : `Bearer realm="switchboard", error="invalid_token", error_description="${refusal.reason}"`,
          },
        );
      }
      return mount.handler(req, res, url);
    }
    if (req.method === 'GET' || req.method === 'HEAD') return this.serveStatic(url.pathname, res);
    return sendJson(res, 404, { error: 'not_found', message: `no route ${req.method} ${url.pathname}` });
  }

  /** No token needed: the client asks before it sends one (auth.ts, docs/security.md). */
  private answerIdentity(res: ServerResponse, url: URL): void {
    const nonce = url.searchParams.get('nonce') ?? '';
    const key = this.options.identityKey;
    if (!key) return sendJson(res, 404, { error: 'not_found', message: 'this switchboard has no identity key' });
    if (!IDENTITY_NONCE.test(nonce)) return sendJson(res, 400, { error: 'invalid_argument', message: 'nonce must be 32–128 base64url characters' });
    const port = (this.server?.address() as AddressInfo | null)?.port ?? 0;
    sendJson(res, 200, { proof: identityProof(key, port, nonce) });
  }

  private async serveStatic(pathname: string, res: ServerResponse): Promise<void> {
    const decoded = decodePathComponent(pathname);
    if (decoded === null) return sendJson(res, 400, { error: 'invalid_argument', message: 'the path is not valid percent-encoded UTF-8' });
    const root = this.options.rendererDir;
    if (!root) {
      return sendJson(res, 404, { error: 'not_found', message: 'the web UI is not built: run `npm run build`' });
    }
    let file = normalize(join(root, decoded));
    // Path traversal: nothing outside the renderer build may be served.
    if (file !== root && !file.startsWith(root.endsWith(sep) ? root : root + sep)) {
      return sendJson(res, 404, { error: 'not_found' });
    }
    let info = await stat(file).catch(() => null);
    if (!info || info.isDirectory()) {
      // Single-page app: unknown paths get index.html.
      file = join(root, 'index.html');
      info = await stat(file).catch(() => null);
      if (!info) return sendJson(res, 404, { error: 'not_found', message: 'the web UI is not built: run `npm run build`' });
    }
    const isHtml = extname(file) === '.html';
    res.writeHead(200, {
      'content-type': STATIC_TYPES[extname(file)] ?? 'application/octet-stream',
      'content-length': info.size,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': isHtml ? 'no-store' : 'public, max-age=31536000, immutable',
      ...(isHtml ? { 'content-security-policy': UI_CSP, 'x-frame-options': 'DENY' } : {}),
    });
    createReadStream(file).pipe(res);
  }
}
