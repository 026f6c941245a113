import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import { errorAnswer, ingest, recordRejection, routeFor, sha256Hex, type Answer, type IngestDeps } from './ingest.js';
import { readBody } from '../http-body.js';
import { decodePathComponent, listen, requestUrl } from '../net.js';
import { TEST_MARK_HEADER } from '../test-marks.js';

/**
 * The receiver port: the only port a tunnel exposes to the internet. It serves nothing but
 * `POST /webhooks/<name>` and `GET /healthz`; nothing here can read events or trigger a replay.
 * Bodies are capped while streaming (a 413 goes out without buffering the rest), and
 * X-Forwarded-For is believed only from a loopback peer (the tunnel agent), never from the
 * internet directly.
 */

export interface ReceiverOptions {
  host: string;
  port: number;
  maxBodyBytes: () => number;
  publicUrl: () => string | null;
  now: () => number;
  /** Why deliveries cannot be stored right now (GET /healthz answers 503 with it), or null. */
  unhealthy?: () => Promise<string | null>;
}

const ROUTE = /^\/webhooks\/([^/?#]+)\/?$/;

export class Receiver {
  private server: Server | undefined;
  /** Answers an answer rule holds back (DESIGN §15): a timer each, never the event loop; stop() sends them at once. */
  private readonly delayed = new Set<() => void>();

  constructor(
    private readonly deps: IngestDeps,
    private readonly options: ReceiverOptions,
  ) {}

  async start(): Promise<AddressInfo> {
    const server = createServer({ requestTimeout: 60_000, headersTimeout: 30_000, keepAliveTimeout: 5_000 }, (req, res) => {
      this.handle(req, res).catch((error) => {
        this.deps.logger.error(`receiver: ${(error as Error).message}`);
        if (!res.headersSent) send(res, errorAnswer(500, 'internal'));
        else res.destroy();
      });
    });
    this.server = server;
    return listen(server, this.options.host, this.options.port, 'receiver');
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const release of [...this.delayed]) release();
    // Stop accepting; requests in flight finish (their rows are committed before they answer).
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = requestUrl(req);
    if (!url) return drainThen(req, res, errorAnswer(400, 'bad_request', 'the request target must be a path, e.g. /webhooks/<provider name>'));
    if (url.pathname === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) {
      // Unhealthy when deliveries cannot be stored (issue #22.5): a 200 here while every delivery gets 503 misleads every probe.
      const reason = (await this.options.unhealthy?.()) ?? null;
      if (reason) return send(res, { status: 503, contentType: 'application/json', body: JSON.stringify({ status: 'unhealthy', reason }) });
      return send(res, { status: 200, contentType: 'application/json', body: '{"status":"ok"}' });
    }
    const match = ROUTE.exec(url.pathname);
    if (!match) return send(res, errorAnswer(404, 'not_found', 'webhooks are received at /webhooks/<provider name>'));
    const name = decodePathComponent(match[1]!);
    if (name === null) return drainThen(req, res, errorAnswer(404, 'unknown_provider'));
    const route = routeFor(this.deps.providers, name);
    if ('answer' in route) return drainThen(req, res, route.answer);
    const { provider } = route;
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return drainThen(req, res, errorAnswer(405, 'method_not_allowed', `webhooks are delivered with POST; this URL receives for "${name}"`));
    }

    const sourceIp = clientAddress(req);
    const maxBodyBytes = this.options.maxBodyBytes();
    const body = await readBody(req, maxBodyBytes);
    if (body.tooLarge) {
      const hint = `the body is over receiver.max_body_bytes (${maxBodyBytes} bytes${body.declared ? `; this one declared ${body.declared}` : ''}): raise the limit in config.json if this sender is legitimate`;
      await recordRejection(this.deps, provider, { rawHeaders: req.headers, sourceIp }, 'body_too_large', hint, {
        size: body.declared ?? body.seen,
        sha256: sha256Hex(Buffer.alloc(0)),
      });
      // Close the connection rather than read the rest of a huge body.
      res.setHeader('connection', 'close');
      send(res, errorAnswer(413, 'body_too_large', hint));
      res.on('finish', () => req.destroy());
      return;
    }
    if (body.aborted) return; // the sender hung up mid-body: nothing to answer, nothing stored

    const headers: Record<string, string> = {};
    for (const key in req.headers) {
      const value = Object.hasOwn(req.headers, key) ? req.headers[key] : undefined;
      if (value !== undefined) headers[key] = Array.isArray(value) ? value.join(', ') : value;
    }
    // A valid test mark is ours and is not stored; anything else in that header is kept, redacted.
    let rawHeaders = req.headers;
    const test = this.deps.testMarks?.claimDelivery(name, headers[TEST_MARK_HEADER], body.bytes) ?? null;
    if (test) {
      delete headers[TEST_MARK_HEADER];
      const { [TEST_MARK_HEADER]: _mark, ...rest } = req.headers;
      rawHeaders = rest;
    }
    const publicBase = this.options.publicUrl();
    const answer = await ingest(this.deps, provider, {
      providerName: name,
      rawBody: body.bytes,
      headers,
      rawHeaders,
      query: url.searchParams,
      publicUrl: publicBase ? new URL(`${url.pathname}${url.search}`, publicBase).toString() : null,
      nowMs: this.options.now(),
      sourceIp,
      test,
    });
    if (answer.delayMs) await this.hold(answer.delayMs, res);
    if (!res.destroyed) send(res, answer);
  }

  private hold(ms: number, res: ServerResponse): Promise<void> {
    return new Promise((resolve) => {
      const release = () => {
        clearTimeout(timer);
        this.delayed.delete(release);
        resolve();
      };
      const timer = setTimeout(release, ms);
      this.delayed.add(release);
      // A sender that gives up waiting frees its slot at once.
      res.once('close', release);
    });
  }
}

/** Answer without leaving an unread body on a keep-alive connection. */
function drainThen(req: IncomingMessage, res: ServerResponse, answer: Answer): void {
  req.resume();
  send(res, answer);
}

function send(res: ServerResponse, answer: Answer): void {
  // A 204 (Discord webhook events) carries no body, so no Content-Type/Length either (RFC 9110).
  const noContent = answer.status === 204;
  res.writeHead(answer.status, {
    ...(noContent ? {} : { 'content-type': answer.contentType, 'content-length': Buffer.byteLength(answer.body) }),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...answer.headers,
  });
  res.end(noContent ? undefined : answer.body);
}

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const plain = address.startsWith('::ffff:') ? address.slice(7) : address;
  return plain === '::1' || /^127\./.test(plain);
}

/**
 * The sender's address. X-Forwarded-For counts only from a loopback peer (the tunnel agent),
 * and then only its rightmost valid IP: each proxy appends the address it received from, so the
 * last entry is the one the tunnel agent wrote; everything left of it came from the internet
 * client and can say anything. Entries that are not an IP are skipped; none left → the peer.
 */
function clientAddress(req: IncomingMessage): string | null {
  const peer = req.socket.remoteAddress;
  const forwarded = req.headers['x-forwarded-for'];
  if (isLoopback(peer) && typeof forwarded === 'string') {
    const entries = forwarded.split(',');
    for (let index = entries.length - 1; index >= 0; index--) {
      const address = forwardedAddress(entries[index]!);
      if (address !== null) return address;
    }
  }
  if (!peer) return null;
  return unmapped(peer);
}

/** One X-Forwarded-For entry as an IP (a bracketed IPv6 is unwrapped), or null. */
function forwardedAddress(entry: string): string | null {
  const text = entry.trim();
  const address = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  return isIP(address) === 0 ? null : unmapped(address.toLowerCase());
}

const unmapped = (address: string) => (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address);
