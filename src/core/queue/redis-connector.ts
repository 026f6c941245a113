import { createConnection, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { AbstractConnector } from 'ioredis';

/**
 * The socket under every Redis connection switchboard opens: what ioredis's standalone
 * connector does, plus a lasting 'error' listener on each socket.
 *
 * Defends against: one bad TLS handshake ending the whole process. ioredis listens for a
 * socket's errors with `once` (twice: its connector and its client), so the first error is
 * reported and the listeners are gone. A TLS socket can emit a second error on the way down —
 * the client refuses the server's certificate, then the server's alert arrives ("tlsv1 alert
 * decode error") — and an 'error' with no listener is thrown as an uncaught exception. A
 * `rediss://` provider with an untrusted certificate retries every few seconds, so sooner or
 * later that took the server (or the desktop app's main process) down. The first error still
 * reaches ioredis and so the provider's status; the later ones belong to a socket already
 * closing and are dropped here.
 */

type NetStream = Socket | TLSSocket;

interface ConnectorOptions {
  host?: string;
  port?: number;
  family?: number;
  path?: string;
  tls?: ConnectionOptions;
  disconnectTimeout?: number;
}

export class SturdyConnector extends AbstractConnector {
  private readonly options: ConnectorOptions;

  /** Given ioredis's resolved options (typed `unknown` by its ConnectorConstructor). */
  constructor(options: unknown) {
    super((options as ConnectorOptions).disconnectTimeout ?? 2_000);
    this.options = options as ConnectorOptions;
  }

  connect(): Promise<NetStream> {
    const { host, port, family, path, tls } = this.options;
    // ioredis's defaults (localhost:6379, family 0) are filled in before a connector is made.
    const target = path ? { path } : { host, port: port ?? 6379, family };
    this.connecting = true;
    // As ioredis's StandaloneConnector: the stream is made on the next tick, and not at all if
    // the connection was closed meanwhile.
    return new Promise((resolve, reject) => {
      process.nextTick(() => {
        if (!this.connecting) {
          reject(new Error('Connection is closed.'));
          return;
        }
        let stream: NetStream;
        try {
          stream = tls ? tlsConnect({ ...target, ...tls }) : createConnection(target);
        } catch (error) {
          reject(error);
          return;
        }
        this.stream = stream;
        stream.once('error', (error) => {
          this.firstError = error;
        });
        stream.on('error', ignoreLaterErrors);
        resolve(stream);
      });
    });
  }
}

function ignoreLaterErrors(): void {
  // See the file's comment: ioredis has seen the first error already.
}
