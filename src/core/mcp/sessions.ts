/**
 * The Streamable HTTP endpoint at /mcp. The control server has already refused wrong Hosts
 * (DNS rebinding), foreign Origins and missing bearer tokens before a request gets here; this
 * file defends against what is left:
 * - memory exhaustion: a body over 1 MiB is refused with 413 before it is buffered or parsed;
 * - MIME sniffing and caching of answers that carry stored payloads: every answer, event
 *   streams included, has `X-Content-Type-Options: nosniff` and `Cache-Control: no-store`;
 * - leaks from clients that vanish: a session is closed on DELETE, after an idle timeout and at
 *   shutdown, and a dropped connection aborts the tool calls it carried (a 120 s wait would
 *   otherwise hold its bus listener for nothing);
 * - session floods (each session is a server, ~50 KB): at most MAX_MCP_SESSIONS live at once;
 *   a new one closes the longest-idle session, and is refused with 503 when every one is busy;
 * - fresh bursts by reconnecting: side effects are rate-limited per bearer token, so every
 *   session of a token draws from one bucket.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, isJSONRPCRequest, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { McpDeps } from './deps.js';
import { readBody } from '../http-body.js';
import { createMcpServer, type SessionServer } from './server.js';
import type { KeyedRateLimits } from '../rate-limit.js';

export const MAX_MCP_BODY_BYTES = 1024 * 1024;
export const SESSION_IDLE_TIMEOUT_MS = 30 * 60_000;
/** Far more than the agents one developer runs at once; far less than a flood. */
export const MAX_MCP_SESSIONS = 32;

const SECURITY_HEADERS = { 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' } as const;

/** JSON-RPC error codes the SDK's transport uses for the same refusals. */
const TRANSPORT_ERROR = -32000;
const SESSION_NOT_FOUND = -32001;
const PARSE_ERROR = -32700;

interface Session {
  /** Set once the transport has answered initialize. */
  id: string;
  readonly transport: StreamableHTTPServerTransport;
  readonly server: SessionServer;
  /** Requests whose HTTP exchange is still open: a session with one is never idle. */
  openRequests: number;
  lastActiveMs: number;
  /** The client opened its event stream (GET): once that closes, the client is gone. */
  streamed: boolean;
  /** Per JSON-RPC request id: aborted if its POST connection closes before the answer. */
  readonly connections: Map<RequestId, AbortController>;
}

export interface McpSessionsOptions {
  idleTimeoutMs?: number;
  /** Per bearer token: every session of one token shares its limiter. */
  rateLimits: KeyedRateLimits;
  now?: () => number;
}

export class McpSessions {
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly idleTimeoutMs: number;
  /** Initializes in progress: they count against the cap before their session is registered. */
  private opening = 0;
  private readonly now: () => number;
  private closed = false;

  constructor(
    private readonly deps: McpDeps,
    private readonly options: McpSessionsOptions,
  ) {
    this.idleTimeoutMs = options.idleTimeoutMs ?? SESSION_IDLE_TIMEOUT_MS;
    this.now = options.now ?? Date.now;
    this.sweeper = setInterval(() => this.closeIdle(), Math.max(10, Math.min(this.idleTimeoutMs / 2, 60_000)));
    this.sweeper.unref();
  }

  /** Open sessions, including ones whose client left without DELETE and has not idled out yet. */
  get size(): number {
    return this.sessions.size;
  }

  /**
   * Sessions with a client still on the other end, for the Connect screen. A client that quits
   * without DELETE (the SDK client's close() sends none) leaves its session open until the idle
   * timeout, so a session counts only while one of its exchanges is open (the GET event stream,
   * a call in flight) or, for a client that never opened an event stream, while it is not idle.
   */
  get liveCount(): number {
    const cutoff = this.now() - this.idleTimeoutMs;
    let live = 0;
    for (const session of this.sessions.values()) {
      if (session.openRequests > 0 || (!session.streamed && session.lastActiveMs >= cutoff)) live++;
    }
    return live;
  }

  readonly handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    enforceSecurityHeaders(res);
    let body: unknown;
    if (req.method === 'POST') {
      const read = await readBody(req, MAX_MCP_BODY_BYTES);
      if (read.tooLarge) {
        res.on('finish', () => req.destroy());
        return sendRpcError(res, 413, TRANSPORT_ERROR, `the request body is over ${MAX_MCP_BODY_BYTES} bytes (1 MiB)`, { connection: 'close' });
      }
      if (read.aborted) return;
      try {
        body = JSON.parse(read.bytes.toString('utf8'));
      } catch {
        return sendRpcError(res, 400, PARSE_ERROR, 'Parse error: the body is not valid JSON');
      }
    }
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = this.sessions.get(sessionId);
      // 404 tells a client its session is gone (closed, timed out, server restarted): initialize again.
      if (!session) return sendRpcError(res, 404, SESSION_NOT_FOUND, 'Session not found');
      return this.dispatch(session, req, res, body);
    }
    if (req.method === 'POST' && isInitializeRequest(body)) return this.open(req, res, body);
    return sendRpcError(res, 400, TRANSPORT_ERROR, 'Bad Request: no Mcp-Session-Id; send initialize first');
  };

  private async open(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    if (this.closed) return sendRpcError(res, 503, TRANSPORT_ERROR, 'switchboard is shutting down');
    if (this.sessions.size + this.opening >= MAX_MCP_SESSIONS && !this.evictIdlest()) {
      return sendRpcError(
        res,
        503,
        TRANSPORT_ERROR,
        `too many MCP sessions: all ${MAX_MCP_SESSIONS} are busy; close one (DELETE /mcp with its Mcp-Session-Id) or retry later`,
        { 'retry-after': '5' },
      );
    }
    this.opening++;
    try {
      await this.start(req, res, body);
    } finally {
      this.opening--;
    }
  }

  /** Closes the session idle the longest to make room; false when every session is busy. */
  private evictIdlest(): boolean {
    let idlest: Session | undefined;
    for (const session of this.sessions.values()) {
      if (session.openRequests === 0 && (!idlest || session.lastActiveMs < idlest.lastActiveMs)) idlest = session;
    }
    if (!idlest) return false;
    this.deps.logger.info(`mcp: closing session ${idlest.id.slice(0, 8)}…, idle the longest, to stay within ${MAX_MCP_SESSIONS} sessions`);
    // Forget it now (close() finishes asynchronously) so the count is right at once.
    this.sessions.delete(idlest.id);
    void idlest.server.mcp.close();
    return true;
  }

  private async start(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const connections = new Map<RequestId, AbortController>();
    const server = createMcpServer(this.deps, {
      // The control server has checked the token; its hash keys the shared limit.
      actionLimiter: this.options.rateLimits.for(bearerToken(req.headers.authorization)),
      connectionSignal: (requestId) => connections.get(requestId)?.signal,
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        session.id = id;
        this.sessions.set(id, session);
      },
    });
    const session: Session = {
      id: '',
      transport,
      server,
      openRequests: 0,
      lastActiveMs: this.now(),
      streamed: false,
      connections,
    };
    // Runs however the session ends: DELETE, idle timeout, shutdown.
    server.mcp.server.onclose = () => this.forget(session);
    await server.mcp.connect(transport);
    await this.dispatch(session, req, res, body);
    // An initialize the transport refused (bad protocol fields…) leaves no session behind.
    if (transport.sessionId === undefined) await server.mcp.close();
  }

  private async dispatch(session: Session, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    session.openRequests++;
    session.lastActiveMs = this.now();
    if (req.method === 'GET') session.streamed = true;
    const requestIds = (Array.isArray(body) ? body : [body]).filter(isJSONRPCRequest).map((message) => message.id);
    for (const id of requestIds) session.connections.set(id, new AbortController());
    res.once('close', () => {
      session.openRequests--;
      session.lastActiveMs = this.now();
      for (const id of requestIds) {
        const connection = session.connections.get(id);
        session.connections.delete(id);
        if (!res.writableFinished) connection?.abort();
      }
    });
    await session.transport.handleRequest(req, res, body);
  }

  private forget(session: Session): void {
    if (this.sessions.get(session.id) === session) this.sessions.delete(session.id);
    session.server.dispose();
    for (const connection of session.connections.values()) connection.abort();
    session.connections.clear();
  }

  private closeIdle(): void {
    const cutoff = this.now() - this.idleTimeoutMs;
    for (const session of this.sessions.values()) {
      if (session.openRequests === 0 && session.lastActiveMs < cutoff) {
        this.deps.logger.info(`mcp: closing session ${session.id.slice(0, 8)}… after ${Math.round(this.idleTimeoutMs / 1000)} s idle`);
        void session.server.mcp.close();
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.values()].map((session) => session.server.mcp.close()));
    this.sessions.clear();
  }
}

function bearerToken(authorization: string | undefined): string {
  return /^Bearer\s+(\S+)/i.exec(authorization ?? '')?.[1] ?? '';
}

/** Whatever the transport writes (its event streams say `no-cache`), answers carry these. */
function enforceSecurityHeaders(res: ServerResponse): void {
  const writeHead = res.writeHead.bind(res) as (status: number, headers?: OutgoingHttpHeaders) => ServerResponse;
  const override = (status: number, headers: OutgoingHttpHeaders = {}) => {
    const kept = Object.entries(headers).filter(([name]) => !(name.toLowerCase() in SECURITY_HEADERS));
    return writeHead(status, { ...Object.fromEntries(kept), ...SECURITY_HEADERS });
  };
  res.writeHead = override as ServerResponse['writeHead'];
}

function sendRpcError(res: ServerResponse, status: number, code: number, message: string, headers: OutgoingHttpHeaders = {}): void {
  const text = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

