import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { API_METHODS, type ApiMethod } from '../../shared/api-methods.js';
import type { SwitchboardApi } from '../../shared/api.js';
import { sendJson } from '../control/server.js';
import { httpStatusFor, SwitchboardError } from '../errors.js';
import { readBody } from '../http-body.js';
import type { Services } from '../services.js';
import { toApiError } from './api-error.js';
import { createApiHandlers } from './handlers.js';
import { subscribeLive } from './live.js';
import { importStream, isNdjsonRequest, parseExportQuery, streamExport } from './export-routes.js';

/**
 * The UI API over HTTP, mounted at `/api` on the control port (which has already checked Host,
 * Origin and the bearer token before anything here runs):
 *   POST /api/<method>  JSON input → 200 JSON output | { error: { code, message, hint? } }
 *   GET  /api/live      Server-Sent Events, one LiveMessage JSON per `data:` line
 *   GET  /api/export    ?format=ndjson|har&filters… — the event log, streamed (api/export-routes.ts)
 *   POST /api/import    an NDJSON body (content-type application/x-ndjson), streamed in
 * Requiring `content-type: application/json` keeps every call out of reach of a plain HTML
 * form even if the other checks were ever loosened.
 */

export const API_PREFIX = '/api';
/** Replays may carry an edited payload as base64: room for the largest body the receiver takes. */
const MAX_API_BODY_BYTES = 48 * 1024 * 1024;
/** A client that stops reading gets cut off instead of growing our memory; it reconnects and refetches. */
const MAX_SSE_BUFFER_BYTES = 8 * 1024 * 1024;
const SSE_HEARTBEAT_MS = 15_000;

const METHODS = new Set<string>(API_METHODS);

/**
 * Mounts `/api` on the control port and returns the handlers, which the desktop shell's IPC
 * transport shares: one instance, so edits from a browser and the window are serialized together.
 */
export function setupApi(sb: Services): SwitchboardApi {
  const api = createApiHandlers(sb);
  const live = new LiveHub(sb);

  sb.control.mount(API_PREFIX, async (req, res, url) => {
    const name = url.pathname.slice(API_PREFIX.length + 1);
    if (name === 'live') {
      if (req.method !== 'GET') return sendError(res, 405, 'invalid_argument', 'use GET /api/live');
      return live.open(req, res);
    }
    if (name === 'export') {
      if (req.method !== 'GET') return sendError(res, 405, 'invalid_argument', 'use GET /api/export?format=ndjson|har');
      let query;
      try {
        query = parseExportQuery(url.searchParams);
      } catch (error) {
        const body = toApiError(error, sb.logger, 'api export');
        return sendJson(res, httpStatusFor(body.code), { error: body });
      }
      return streamExport(sb, query, res).catch((error: unknown) => {
        // Before the first byte (the first batch is read first), any refusal is an answer with its status.
        if (!res.headersSent) {
          const body = toApiError(error, sb.logger, 'api export');
          return sendJson(res, httpStatusFor(body.code), { error: body });
        }
        // Mid-stream, the status line is gone: all that is left is to cut the response short.
        sb.logger.error(`api export: ${(error as Error).message}`);
        res.destroy();
      });
    }
    if (name === 'import') {
      if (req.method !== 'POST') return sendError(res, 405, 'invalid_argument', 'use POST /api/import with an NDJSON body');
      if (!isNdjsonRequest(req)) return sendError(res, 415, 'invalid_argument', 'send the export lines as content-type: application/x-ndjson');
      try {
        sendJson(res, 200, await importStream(sb, req as AsyncIterable<Buffer>));
      } catch (error) {
        const body = toApiError(error, sb.logger, 'api import');
        sendJson(res, httpStatusFor(body.code), { error: body });
      }
      return;
    }
    if (!METHODS.has(name)) return sendError(res, 404, 'not_found', `no API method "${name}"`);
    if (req.method !== 'POST') return sendError(res, 405, 'invalid_argument', `use POST /api/${name}`);
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
      return sendError(res, 415, 'invalid_argument', 'send the input as content-type: application/json');
    }
    const method = name as ApiMethod;
    try {
      const input = await readJson(req);
      const output = await (api[method] as (input: unknown) => Promise<unknown>)(input);
      sendJson(res, 200, output);
    } catch (error) {
      const body = toApiError(error, sb.logger, `api ${method}`);
      sendJson(res, httpStatusFor(body.code), { error: body });
    }
  });

  sb.onStop('ui live streams', () => live.closeAll());
  return api;
}

function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  sendJson(res, status, { error: { code, message } });
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const read = await readBody(req, MAX_API_BODY_BYTES);
  if (read.tooLarge) {
    req.destroy();
    throw new SwitchboardError('invalid_argument', `the request body is over ${MAX_API_BODY_BYTES} bytes`);
  }
  if (read.aborted) throw new SwitchboardError('invalid_argument', 'the request body ended before it was complete');
  const text = read.bytes.toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new SwitchboardError('invalid_argument', 'the request body is not valid JSON');
  }
}

/**
 * Live streams (`GET /api/live`) are capped per token and in all (DESIGN §6, #22.13): each open
 * stream costs memory and a write per message, and two thousand of them once slowed ingest from
 * ~7,000 to ~180 deliveries/s. Beyond a cap the answer is 429 with Retry-After. Every stream
 * shares one bus subscription, each message is serialized once for all of them, and the writes
 * happen in one setImmediate per burst — off the ingest path, whose cost no longer grows with
 * the number of streams.
 */
export const MAX_LIVE_STREAMS = 64;
export const MAX_LIVE_STREAMS_PER_TOKEN = 32;

interface LiveStream {
  res: ServerResponse;
  token: string;
  pending: string[];
}

class LiveHub {
  private readonly streams = new Set<LiveStream>();
  private readonly perToken = new Map<string, number>();
  private unsubscribe: (() => void) | undefined;
  private scheduled = false;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(private readonly sb: Services) {}

  get size(): number {
    return this.streams.size;
  }

  open(req: IncomingMessage, res: ServerResponse): void {
    // The control server checked the bearer token already; streams are counted per token value.
    const token = createHash('sha256').update(req.headers.authorization ?? '').digest('base64url');
    const mine = this.perToken.get(token) ?? 0;
    if (this.streams.size >= MAX_LIVE_STREAMS || mine >= MAX_LIVE_STREAMS_PER_TOKEN) {
      const limit = this.streams.size >= MAX_LIVE_STREAMS ? `${MAX_LIVE_STREAMS} in all` : `${MAX_LIVE_STREAMS_PER_TOKEN} per token`;
      return sendJson(res, 429, { error: { code: 'rate_limited', message: `too many live streams open (at most ${limit}): close one (a browser tab, an \`events --follow\`) and retry` } }, { 'retry-after': '5' });
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      connection: 'keep-alive',
    });
    res.write(': switchboard live\n\n');
    const stream: LiveStream = { res, token, pending: [] };
    this.streams.add(stream);
    this.perToken.set(token, mine + 1);
    if (!this.unsubscribe) this.start();
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      this.streams.delete(stream);
      const left = (this.perToken.get(token) ?? 1) - 1;
      if (left > 0) this.perToken.set(token, left);
      else this.perToken.delete(token);
      if (this.streams.size === 0) this.stop();
    };
    req.on('close', close);
    res.on('close', close);
  }

  closeAll(): void {
    for (const stream of this.streams) stream.res.end();
    this.streams.clear();
    this.perToken.clear();
    this.stop();
  }

  private start(): void {
    this.unsubscribe = subscribeLive(this.sb, (message) => this.broadcast(`data: ${JSON.stringify(message)}\n\n`));
    this.heartbeat = setInterval(() => {
      for (const stream of this.streams) stream.res.write(': ping\n\n');
    }, SSE_HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    clearInterval(this.heartbeat);
  }

  private broadcast(frame: string): void {
    for (const stream of this.streams) stream.pending.push(frame);
    if (!this.scheduled) {
      this.scheduled = true;
      // One write per stream per event-loop turn: a burst of deliveries becomes one chunk each.
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.scheduled = false;
    for (const stream of this.streams) {
      if (stream.pending.length === 0) continue;
      const chunk = stream.pending.join('');
      stream.pending = [];
      // A client that stops reading gets cut off instead of growing our memory.
      if (stream.res.writableLength > MAX_SSE_BUFFER_BYTES) stream.res.destroy();
      else stream.res.write(chunk);
    }
  }
}
