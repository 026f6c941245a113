import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A real local webhook consumer on port 0, the thing replays are for. It listens on `::`
 * (dual-stack) so that every spelling of this machine — 127.0.0.1, ::1, 0.0.0.0, ::,
 * ::ffff:127.0.0.1 — would reach it: a guard that let one through would show up as a
 * connection here.
 */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  at: number;
}

export type Respond = (request: ReceivedRequest, res: ServerResponse) => void;

export interface Consumer {
  port: number;
  url(path?: string): string;
  requests: ReceivedRequest[];
  /** TCP connections accepted, whether or not a request followed. */
  connections: number;
  respond: Respond;
  /** Resolves with the next request (or the n-th from now). */
  nextRequest(timeoutMs?: number): Promise<ReceivedRequest>;
  reset(): void;
  close(): Promise<void>;
}

export const ok: Respond = (_request, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end('ok');
};

export async function startConsumer(host = '::'): Promise<Consumer> {
  const sockets = new Set<Socket>();
  const waiters: ((request: ReceivedRequest) => void)[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: ReceivedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks), at: Date.now() };
      consumer.requests.push(request);
      waiters.splice(0).forEach((resolve) => resolve(request));
      consumer.respond(request, res);
    });
  });
  server.on('connection', (socket: Socket) => {
    consumer.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  const consumer: Consumer = {
    port,
    url: (path = '/webhooks') => `http://127.0.0.1:${port}${path}`,
    requests: [],
    connections: 0,
    respond: ok,
    nextRequest(timeoutMs = 5_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no request within ${timeoutMs} ms`)), timeoutMs);
        waiters.push((request) => {
          clearTimeout(timer);
          resolve(request);
        });
      });
    },
    reset() {
      consumer.requests = [];
      consumer.connections = 0;
      consumer.respond = ok;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return consumer;
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
