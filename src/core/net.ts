import type { IncomingMessage, Server } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { SwitchboardError } from './errors.js';

/** listen() that turns EADDRINUSE/EACCES into one clear, actionable error. */
export function listen(server: Server, host: string, port: number, what: 'receiver' | 'control'): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      const flag = what === 'receiver' ? '--port' : '--control-port';
      const key = what === 'receiver' ? 'receiver.port' : 'control.port';
      if (error.code === 'EADDRINUSE') {
        reject(
          new SwitchboardError('port_in_use', `the ${what} port ${port} on ${host} is already in use`, {
            hint: `stop whatever is using it (is another switchboard running?), or pick another port with ${flag} N or ${key} in config.json`,
            cause: error,
          }),
        );
      } else if (error.code === 'EACCES') {
        reject(new SwitchboardError('port_in_use', `not allowed to listen on ${host}:${port} for the ${what}`, { hint: `use a port above 1023 (${flag} N)`, cause: error }));
      } else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') {
        reject(new SwitchboardError('config_invalid', `cannot listen on ${host}: no such local address`, { hint: `fix ${what}.host in config.json`, cause: error }));
      } else {
        reject(error);
      }
    };
    const onListening = () => {
      server.off('error', onError);
      resolve(server.address() as AddressInfo);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

/**
 * Fails as `listen` would when the port cannot be had, then lets it go again: start-up checks
 * its ports before it spends seconds opening the database (a taken port is said at once).
 * Port 0 always succeeds. A port taken between the probe and the real listen still fails there.
 */
export async function probePort(host: string, port: number, what: 'receiver' | 'control'): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await listen(probe as unknown as Server, host, port, what);
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

/** The receiver and the control server on one port: one clear line instead of "already in use". */
export function checkDistinctPorts(receiverPort: number, controlPort: number): void {
  if (receiverPort !== 0 && receiverPort === controlPort) {
    throw new SwitchboardError('config_invalid', `the receiver and the control server cannot share port ${receiverPort}`, {
      hint: 'give them different ports (--port N and --control-port M, or receiver.port and control.port in config.json)',
    });
  }
}

/** `http://127.0.0.1:7777`, with IPv6 hosts bracketed. */
export function originOf(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * A request's path and query as a URL, or null when the request target is not a plain
 * origin-form path ("/…"). Parsing against a fixed base instead of `new URL(req.url, base)`
 * keeps "//" and "//host/…" from throwing or being read as a host, so odd targets end in a
 * 400 and never in a 500.
 */
export function requestUrl(req: Pick<IncomingMessage, 'url'>): URL | null {
  const target = req.url ?? '';
  if (!target.startsWith('/')) return null;
  try {
    return new URL(`http://request${target}`);
  } catch {
    return null;
  }
}

/** A percent-decoded path segment, or null when the encoding is broken or decodes to a NUL. */
export function decodePathComponent(text: string): string | null {
  try {
    const decoded = decodeURIComponent(text);
    return decoded.includes('\0') ? null : decoded;
  } catch {
    return null;
  }
}
