import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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

/** `http://127.0.0.1:7777`, with IPv6 hosts bracketed. */
export function originOf(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
